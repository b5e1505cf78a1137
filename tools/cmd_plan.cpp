// `parplan plan --job FILE [--top K] [--json] [--fix KEY=VALUE]... [--objective ...]
// [--max-memory-fraction F] [--pareto] [--all-variants] [--threads N] [--stats] [--report DIR]`:
// searches the plan space; --report writes the comparison report (tools/report) of the top
// plans. No plan that fits: tools/plan_dead_end.h explains, exit 3.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "core/atomic_file.h"
#include "core/cluster_shape.h"
#include "core/plural.h"
#include "core/units.h"
#include "planner/plan_groups.h"
#include "planner/prediction_interval.h"
#include "planner/search.h"
#include "tools/calibration_option.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/estimate_json.h"
#include "tools/memory_fit.h"
#include "tools/plan_dead_end.h"
#include "tools/plan_sweep.h"
#include "tools/report/report_writers.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

struct PlanOptions {
  std::string job;
  int top = 10;
  bool json = false;
  std::vector<std::string> fixes;
  std::string objective = "throughput";
  double max_memory_fraction = 0;  // 0: the error model's (planner/prediction_interval.h)
  bool pareto = false;
  bool all_variants = false;  // list near-copies of a layout too (planner/plan_groups.h)
  int threads = 0;
  bool stats = false;
  std::string profile;
  std::string calibration;   // --calibration CAL.json (tools/calibration_option.h)
  std::string report;        // folder for report.{html,md,csv,json}; empty: none
  std::string gpus;          // --gpus: sweep cluster sizes (tools/plan_sweep.h); empty: the job's
  double deadline_days = 0;  // --deadline-days; 0: none
};

Json ranked_json(const Job& base, const std::vector<planner::RankedPlan>& plans) {
  Json list = Json::array();
  for (const auto& r : plans) {
    Job job = base;
    job.plan = r.plan;
    Json entry = estimate_to_json(job, r.estimate);
    entry.erase("memory");
    entry["folded_variants"] = r.folded_variants;
    list.push_back(entry);
  }
  return list;
}

// Writes the report of the top plans; notices go to stderr so that --json stays pure.
void write_plan_report(const PlanOptions& o, const Job& job, const planner::SearchResult& r) {
  if (r.top.empty()) {
    std::fprintf(stderr, "no report written: no plan fits\n");
    return;
  }
  std::vector<ReportPlan> plans;
  for (std::size_t k = 0; k < r.top.size(); ++k) {
    ReportPlan plan;
    plan.label = "search #" + std::to_string(k + 1);
    plan.source = "search";
    plan.job = job;
    plan.job.plan = r.top[k].plan;
    plan.estimate = r.top[k].estimate;
    plan.folded_variants = r.top[k].folded_variants;
    plans.push_back(std::move(plan));
  }
  const ReportFiles files = write_report(o.report, build_report(job, std::move(plans)), {o.job});
  std::fprintf(o.json ? stderr : stdout, "\nreport: %s (also report.md, report.csv, report.json)\n",
               files.html.c_str());
}

planner::SearchOptions search_options(const PlanOptions& o) {
  planner::SearchOptions search;
  search.fixes = planner::parse_fixes(o.fixes);
  search.top_k = o.top;
  search.distinct = !o.all_variants;
  search.pareto = o.pareto;
  search.threads = o.threads;
  search.max_memory_fraction = o.max_memory_fraction > 0
                                   ? o.max_memory_fraction
                                   : planner::recommended_max_memory_fraction();
  search.objective =
      o.objective == "memory" ? planner::Objective::MemoryHeadroom : planner::Objective::Throughput;
  return search;
}

// --gpus: the best plan at each cluster size, and with --deadline-days the cheapest size.
void run_plan_sweep(const PlanOptions& o, const Job& job) {
  const std::vector<int64_t> sizes = parse_gpu_sizes(o.gpus, job.cluster.node.gpus_per_node);
  if (!o.report.empty()) check_report_dir(o.report);
  const std::optional<double> deadline =
      o.deadline_days > 0 ? std::optional<double>(o.deadline_days) : std::nullopt;
  const SweepResult sweep = sweep_cluster_sizes(job, sizes, search_options(o), deadline);
  std::string html;
  if (!o.report.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directory(o.report, ec);
    html = (fs::path(o.report) / "sweep.html").string();
    const std::string json = (fs::path(o.report) / "sweep.json").string();
    check_not_overwriting_inputs(html, {o.job});
    check_not_overwriting_inputs(json, {o.job});
    write_file_atomically(json, sweep_to_json(job, sweep, deadline).dump(2) + "\n");
    write_file_atomically(html, sweep_to_html(job, sweep, deadline));
  }
  if (o.json) {
    print_json(sweep_to_json(job, sweep, deadline));
    if (!html.empty()) std::fprintf(stderr, "sweep report: %s (also sweep.json)\n", html.c_str());
    return;
  }
  std::printf("%s on %s nodes, global batch %lld x %lld tokens, %s, %s\n\n", job.model.name.c_str(),
              job.cluster.node.name.c_str(), static_cast<long long>(job.training.global_batch_size),
              static_cast<long long>(job.training.seq_length), to_string(job.training.precision),
              to_string(job.framework));
  std::fputs(sweep_to_text(job, sweep, deadline).c_str(), stdout);
  if (!html.empty()) std::printf("\nsweep report: %s (also sweep.json)\n", html.c_str());
}

void run_plan(const PlanOptions& o) {
  Job job = load_job(o.job, PlanCheck::Skip);
  print_job_warnings(job);
  apply_profile_option(job, o.profile);
  const auto calibration = apply_calibration_option(job, o.calibration);
  if (calibration)
    std::fprintf(o.json ? stderr : stdout, "%s\n", calibration_line(calibration).c_str());
  if (!o.gpus.empty()) {
    run_plan_sweep(o, job);
    return;
  }
  if (!o.report.empty()) check_report_dir(o.report);
  planner::SearchOptions search = search_options(o);
  planner::check_fixes_fit_cluster(job, search.fixes);
  const bool bar = !o.json && isatty(STDERR_FILENO);
  if (bar) {
    search.progress = [](int64_t done, int64_t total) {
      const int width = 30;
      const int filled = total > 0 ? static_cast<int>(width * done / total) : width;
      std::fprintf(stderr, "\r[%s%s] %lld plans timed", std::string(filled, '#').c_str(),
                   std::string(width - filled, '.').c_str(), static_cast<long long>(done));
    };
  }
  const planner::SearchResult r = planner::search_plans(job, search);
  if (bar) std::fprintf(stderr, "\r%60s\r", "");
  const double rate = r.search_time_s > 0 ? static_cast<double>(r.valid) / r.search_time_s : 0;
  std::optional<DeadEnd> dead_end;
  if (r.top.empty()) dead_end = explain_dead_end(job, o.fixes, search, r);

  if (o.json) {
    Json rejected = Json::object();
    for (const auto& [reason, count] : r.rejected) rejected[reason] = count;
    Json out = {{"plans", ranked_json(job, r.top)},
                {"evaluated", r.evaluated},
                {"feasible", r.feasible},
                {"search_time_s", r.search_time_s},
                {"considered", r.considered},
                {"valid", r.valid},
                {"pruned_by_bound", r.pruned_by_bound},
                {"rejected", rejected},
                {"layer_cost_keys", r.layer_cost_keys},
                {"plans_per_s", rate},
                {"threads", r.threads},
                {"objective", o.objective},
                {"distinct", search.distinct},
                {"folded_variants", r.folded_variants},
                {"max_memory_fraction", search.max_memory_fraction}};
    if (o.pareto) out["pareto"] = ranked_json(job, r.pareto);
    if (dead_end) out["no_plan"] = dead_end->json;
    add_calibration_key(out, calibration);
    print_json(out);
    if (!o.report.empty()) write_plan_report(o, job, r);
    if (dead_end) throw QuietExit{kNoPlanFitsExit};
    return;
  }
  std::printf("%s on %s, global batch %lld x %lld tokens, %s, %s\n\n", job.model.name.c_str(),
              cluster_shape_text(job.cluster).c_str(),
              static_cast<long long>(job.training.global_batch_size),
              static_cast<long long>(job.training.seq_length), to_string(job.training.precision),
              to_string(job.framework));
  if (dead_end) {
    std::fputs(dead_end->text.c_str(), stdout);
    if (o.max_memory_fraction <= 0 && search.max_memory_fraction < 1.0) {
      std::printf(
          "(plans had to fit within %.1f%% of GPU memory, the default headroom for the memory "
          "model's measured error; --max-memory-fraction 1.0 admits plans predicted to fill the "
          "GPU)\n",
          100 * search.max_memory_fraction);
    }
  } else {
    TextTable table(
        {"#", "plan", "step s", "tokens/s", "MFU", "memory GiB", "bubble", "exposed comm"});
    int rank = 1;
    for (const auto& p : r.top) {
      const auto& b = p.estimate.breakdown;
      const double comm = b.tp_comm + b.cp_comm + b.ep_comm + b.dp_comm + b.fsdp_comm;
      table.add_row({std::to_string(rank++), plan_cell(p.plan), fixed(p.estimate.step_time_s, 3),
                     fixed(p.estimate.tokens_per_s, 0), percent(p.estimate.mfu),
                     fixed(p.estimate.memory.peak_bytes / kGiB, 1),
                     percent(b.pp_bubble / p.estimate.step_time_s),
                     percent(comm / p.estimate.step_time_s)});
    }
    std::fputs(table.render({0, 2, 3, 4, 5, 6, 7}).c_str(), stdout);
    if (r.folded_variants > 0) {
      std::printf(
          "(%lld variants folded into these plans: they differ only in %s; "
          "--all-variants lists them)\n",
          static_cast<long long>(r.folded_variants), planner::kFoldedKeys);
    }
    std::printf("\nplans fit within %.1f%% of GPU memory (%s)\n", 100 * search.max_memory_fraction,
                o.max_memory_fraction > 0 ? "--max-memory-fraction"
                                          : "headroom for the memory model's measured error");
    std::printf("\nbest plan:\n");
    Job best = job;
    best.plan = r.top.front().plan;
    std::fputs(estimate_to_text(best, r.top.front().estimate).c_str(), stdout);
    // A plan at the edge of the GPU's memory may not fit for real (tools/memory_fit.h).
    const auto& memory = r.top.front().estimate.memory;
    std::printf("%s\n", memory_fit_text(memory).c_str());
    const std::string note = tight_memory_note("the best plan", memory);
    if (!note.empty() && search.max_memory_fraction > kTightMemoryFraction) {
      std::printf("note: %s\n", note.c_str());
    }
  }
  if (o.pareto && !r.pareto.empty()) {
    std::printf("\ntime-vs-memory Pareto front:\n");
    TextTable table({"memory GiB", "step s", "plan"});
    for (const auto& p : r.pareto) {
      table.add_row({fixed(p.estimate.memory.peak_bytes / kGiB, 1),
                     fixed(p.estimate.step_time_s, 3), plan_cell(p.plan)});
    }
    std::fputs(table.render({0, 1}).c_str(), stdout);
  }
  std::printf(
      "\nsearch: %lld combinations, %lld valid, %lld fit in memory, %lld timed exactly, "
      "%lld ruled out by their lower bound; %.3f s on %s (%.0f plans/s)\n",
      static_cast<long long>(r.considered), static_cast<long long>(r.valid),
      static_cast<long long>(r.feasible), static_cast<long long>(r.evaluated),
      static_cast<long long>(r.pruned_by_bound), r.search_time_s,
      count_of(r.threads, "thread").c_str(), rate);
  if (!r.rejected.empty()) {
    std::string line;
    for (const auto& [reason, count] : r.rejected) {
      line += (line.empty() ? "" : ", ") + reason + " " + std::to_string(count);
    }
    std::printf("rejected: %s\n", line.c_str());
  }
  if (o.stats) {
    std::printf("per-layer cost keys: %lld\n", static_cast<long long>(r.layer_cost_keys));
  }
  if (!o.report.empty()) write_plan_report(o, job, r);
  if (dead_end) throw QuietExit{kNoPlanFitsExit};
}

}  // namespace

void register_plan(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  auto* cmd =
      app.add_subcommand("plan", "Search the plan space for the job's model, cluster and training");
  cmd->add_option("--job", o->job, "Job file (its plan, if any, is ignored)")->required();
  cmd->add_option("--top", o->top, "Number of plans to list")->check(CLI::Range(1, 100000));
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_option("--fix", o->fixes, "Pin a plan key, KEY=VALUE (repeatable), e.g. --fix tp=8");
  cmd->add_option("--objective", o->objective, "throughput (default) or memory (most headroom)")
      ->check(CLI::IsMember({"throughput", "memory"}));
  cmd->add_option("--max-memory-fraction", o->max_memory_fraction,
                  "A plan fits when its peak memory is at most this fraction of the GPU's "
                  "(default: the headroom the memory model's measured error needs, "
                  "docs/intervals.md)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_flag("--pareto", o->pareto, "Also list the time-vs-memory Pareto front");
  cmd->add_flag("--all-variants", o->all_variants,
                std::string("List every variant of a layout (") + planner::kFoldedKeys +
                    "), not only its best");
  cmd->add_option("--threads", o->threads, "Worker threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_flag("--stats", o->stats, "Print search statistics");
  cmd->add_option(
      "--profile", o->profile,
      "Measured hardware profile (parplan profile) replacing the node preset's figures");
  add_calibration_option(cmd, o->calibration);
  cmd->add_option("--report", o->report,
                  "Also write report.{html,md,csv,json} of the top plans into this folder");
  auto* gpus = cmd->add_option(
      "--gpus", o->gpus,
      "Sweep cluster sizes in GPUs (whole nodes): A:B doubles from A to B, A:B:STEP, or N,M,...");
  cmd->add_option("--deadline-days", o->deadline_days,
                  "With --gpus: the cheapest size (fewest GPU-hours) training total_tokens "
                  "within this many days")
      ->check(CLI::Range(1e-6, 1e6))
      ->needs(gpus);
  gpus->excludes(cmd->get_option("--pareto"));
  cmd->callback([o] { run_plan(*o); });
}

}  // namespace parplan::tools
