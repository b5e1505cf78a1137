// `parplan validate --published FILE [--json] [--strict]`: predicts every published run and
// reports predicted vs reference step time (and memory where known) with MAPE, median and p90.
// Entries that cannot be read or predicted are listed with their errors (stderr, and
// "rejected" in the JSON) and left out of the statistics; the exit code is 1 when no entry
// could be evaluated, or with --strict when any was rejected.
#include <cstdio>
#include <map>
#include <thread>

#include "core/check.h"
#include "core/units.h"
#include "planner/search.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/published_runs.h"
#include "tools/report/why.h"
#include "tools/text_table.h"
#include "tools/validate_run.h"

namespace parplan::tools {

namespace {

struct ValidateOptions {
  std::string published;
  bool json = false;
  bool planner = false;
  int threads = 0;
  std::string profile;
  bool run = false;
  int ranks = 0;
  int steps = 4;
  bool no_oversubscribed = false;
  bool quick = false;
  bool strict = false;
};

Json rejected_json(const std::vector<RejectedRun>& rejected) {
  Json list = Json::array();
  for (const auto& r : rejected) {
    list.push_back({{"index", r.index}, {"id", r.id}, {"error", r.error}});
  }
  return list;
}

// Tells about the entries left out (on stderr, so that stdout stays one table or one JSON
// object), then applies the exit-code rules above.
void report_rejected(const std::vector<RejectedRun>& rejected, std::size_t evaluated,
                     const ValidateOptions& options) {
  if (rejected.empty()) return;
  std::fprintf(stderr, "%zu of %zu entries of %s could not be evaluated and are left out:\n",
               rejected.size(), rejected.size() + evaluated, options.published.c_str());
  for (const auto& r : rejected) {
    std::fprintf(stderr, "  [%zu] %s: %s\n", r.index, r.id.c_str(), r.error.c_str());
  }
  if (evaluated == 0 || options.strict) throw QuietExit{1};
}

Json stats_json(const ErrorStats& s) {
  return {{"count", s.count},
          {"mape", s.mape},
          {"median_ape", s.median_ape},
          {"p90_ape", s.p90_ape},
          {"max_ape", s.max_ape}};
}

// Measured (executor) vs predicted (cost model + profile) on this machine.
void run_executor_validation(const ValidateOptions& options) {
  if (options.profile.empty()) {
    throw Error(
        "validate --run needs --profile PROFILE.json: a CPU profile of this machine "
        "(mpirun -np 2 parplan profile --backend cpu --quick --out PROFILE.json)");
  }
  RunValidationOptions run;
  run.profile = options.profile;
  run.max_ranks = options.ranks;
  run.oversubscribed = !options.no_oversubscribed;
  run.steps = options.steps;
  const int cores = options.ranks > 0
                        ? options.ranks
                        : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  auto entries = run_validation_plans(cores, run.oversubscribed, options.quick);
  run_and_predict(entries, run, [&](const std::string& line) {
    if (!options.json) std::fprintf(stderr, "%s\n", line.c_str());
  });
  std::vector<double> within, over, memory;
  Json list = Json::array();
  TextTable table(
      {"plan", "ranks", "predicted s", "measured s", "error", "pred GiB", "meas GiB", "set"});
  for (const auto& e : entries) {
    const double error = e.predicted_step_time_s / e.measured_step_time_s - 1.0;
    const double mem_error = e.predicted_memory_gib / e.measured_memory_gib - 1.0;
    (e.oversubscribed ? over : within).push_back(error);
    if (!e.oversubscribed) memory.push_back(mem_error);
    list.push_back({{"plan", parallel_plan_to_json(e.job.plan)},
                    {"label", e.label},
                    {"ranks", e.ranks},
                    {"oversubscribed", e.oversubscribed},
                    {"predicted_step_time_s", e.predicted_step_time_s},
                    {"reference_step_time_s", e.measured_step_time_s},
                    {"step_time_error", error},
                    {"predicted_memory_gib", e.predicted_memory_gib},
                    {"reference_memory_gib", e.measured_memory_gib},
                    {"memory_error", mem_error},
                    {"measured_breakdown", e.measured.value("breakdown", Json::object())}});
    table.add_row({e.label, std::to_string(e.ranks), fixed(e.predicted_step_time_s, 4),
                   fixed(e.measured_step_time_s, 4), percent(error),
                   fixed(e.predicted_memory_gib, 4), fixed(e.measured_memory_gib, 4),
                   e.oversubscribed ? "oversubscribed" : "ranks <= cores"});
  }
  const ErrorStats s = error_stats(within);
  const ErrorStats o = error_stats(over);
  const ErrorStats m = error_stats(memory);
  if (options.json) {
    print_json({{"runs", list},
                {"mape", s.mape},
                {"median_ape", s.median_ape},
                {"within_cores", stats_json(s)},
                {"oversubscribed", stats_json(o)},
                {"memory", stats_json(m)},
                {"cores", cores},
                {"profile", options.profile}});
    return;
  }
  std::fputs(table.render({1, 2, 3, 4, 5, 6}).c_str(), stdout);
  std::printf("\nstep time, ranks <= %d cores: n=%d median %.1f%% MAPE %.1f%% max %.1f%%\n", cores,
              s.count, 100 * s.median_ape, 100 * s.mape, 100 * s.max_ape);
  if (o.count > 0) {
    std::printf("step time, oversubscribed (time-shared cores): n=%d median %.1f%% MAPE %.1f%%\n",
                o.count, 100 * o.median_ape, 100 * o.mape);
  }
  std::printf("peak memory, ranks <= cores: median %.1f%% MAPE %.1f%%\n", 100 * m.median_ape,
              100 * m.mape);
}

// For every run: search the plan space of its model, cluster and training, and compare the
// published plan's predicted time with the best plan's ("regret": how much faster we claim
// to be; experts tuned the published plans, so large regrets point at the model). Each regret
// above 10% comes with the breakdown parts behind it (tools/report/why.h), so that a claimed
// improvement can be judged: a real one (a feature the published run did not use) or a
// modelling error. A second search keeps the published run's features (recomputation, ZeRO
// stage, sequence parallelism, cp and ep degrees) and searches only the layout (tp, pp, dp,
// vpp, micro-batch, schedule): the regret of the choices its authors made among what they
// used. Each claim is also held against the highest MFU that any run of the file measured on
// the same GPU at the same peak: a best plan above it claims more than anyone measured.
void run_planner_regret(const std::vector<PublishedRun>& runs, std::vector<RejectedRun> rejected,
                        const ValidateOptions& options) {
  struct Row {
    const PublishedRun* run;
    Json json;
    std::vector<std::string> cells;
    double regret;
    double best_mfu;
    std::string gpu_key;  // GPU and peak: MFUs compare only against the same peak
    std::string why;
  };
  std::vector<Row> rows;
  // The highest MFU measured (reference times) on each GPU and peak in the file.
  std::map<std::string, std::pair<double, std::string>> highest_measured_mfu;
  int within = 0;
  int within_same = 0;
  for (const auto& run : runs) {
    cost::StepEstimate published;
    planner::SearchOptions search;
    search.top_k = 1;
    search.threads = options.threads;
    planner::SearchResult r;
    try {
      published = cost::estimate_step(run.job);
      r = planner::search_plans(run.job, search);
    } catch (const Error& e) {
      rejected.push_back({run.index, run.id, e.what()});
      continue;
    }
    // MFUs compare against the same peak: fp16 and bf16 share the 16-bit tensor-core peak.
    const GpuSpec& gpu = run.job.cluster.node.gpu;
    const std::string gpu_key = gpu.name + " at " +
                                fixed(gpu.computed_peak_tflops(run.job.training.precision), 0) +
                                " TFLOP/s";
    const double measured_mfu = published.mfu * published.step_time_s / run.reference_step_time_s;
    auto& highest = highest_measured_mfu[gpu_key];
    if (measured_mfu > highest.first) highest = {measured_mfu, run.id};
    if (r.top.empty()) continue;
    const auto& best = r.top.front();
    // The published plan may lie outside our default space (or not fit our memory model);
    // the best of the two is the reference.
    const double best_s = std::min(best.estimate.step_time_s, published.step_time_s);
    const double regret = published.step_time_s / best_s - 1.0;
    planner::SearchOptions same = search;
    same.fixes.recompute = run.job.plan.recompute;
    same.fixes.zero_stage = run.job.plan.zero_stage;
    same.fixes.sequence_parallel = run.job.plan.sequence_parallel;
    same.fixes.cp = run.job.plan.cp;
    same.fixes.ep = run.job.plan.ep;
    const planner::SearchResult rs = planner::search_plans(run.job, same);
    const double same_best_s =
        rs.top.empty() ? published.step_time_s
                       : std::min(rs.top.front().estimate.step_time_s, published.step_time_s);
    const double same_regret = published.step_time_s / same_best_s - 1.0;
    if (same_regret <= 0.10) ++within_same;
    std::string why;
    if (regret <= 0.10) {
      ++within;
    } else {
      Job best_job = run.job;
      best_job.plan = best.plan;
      why = compare_plans(ReportPlan{"best plan", "search", best_job, best.estimate, 1},
                          ReportPlan{"published plan", "job", run.job, published, 2});
    }
    Json json = {{"id", run.id},
                 {"published_plan_step_time_s", published.step_time_s},
                 {"best_plan_step_time_s", best.estimate.step_time_s},
                 {"best_plan_mfu", best.estimate.mfu},
                 {"regret", regret},
                 {"same_features_regret", same_regret},
                 {"published_plan_fits", published.memory.fits},
                 {"best_plan", parallel_plan_to_json(best.plan)},
                 {"why", why}};
    const auto& p = best.plan;
    std::vector<std::string> cells = {
        run.id,
        fixed(published.step_time_s, 3),
        fixed(best.estimate.step_time_s, 3),
        percent(regret),
        "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " dp" + std::to_string(p.dp) +
            " cp" + std::to_string(p.cp) + " ep" + std::to_string(p.ep) + " vpp" +
            std::to_string(p.vpp) + " mbs" + std::to_string(p.micro_batch_size) + " " +
            to_string(p.recompute) + " z" + std::to_string(p.zero_stage),
        percent(same_regret)};
    rows.push_back(
        {&run, std::move(json), std::move(cells), regret, best.estimate.mfu, gpu_key, why});
  }

  // A claimed improvement is within reach when its best plan's MFU is no higher than an MFU
  // that some run of the file measured on the same GPU at the same peak.
  Json list = Json::array();
  TextTable table({"run", "published s", "best s", "regret", "best plan", "same features"});
  std::vector<std::string> reasons;
  int claims = 0;
  int claims_within_reach = 0;
  for (auto& row : rows) {
    const auto& highest = highest_measured_mfu.at(row.gpu_key);
    row.json["highest_measured_mfu_same_gpu"] = highest.first;
    row.json["highest_measured_mfu_run"] = highest.second;
    if (row.regret > 0.10) {
      ++claims;
      const bool reach = row.best_mfu <= highest.first;
      claims_within_reach += reach;
      char mfu[400];
      std::snprintf(mfu, sizeof mfu,
                    " Best plan MFU %.1f%%: %s the highest MFU measured on %s in this file, "
                    "%.1f%% (%s).",
                    100 * row.best_mfu, reach ? "within" : "ABOVE", row.gpu_key.c_str(),
                    100 * highest.first, highest.second.c_str());
      reasons.push_back(row.run->id + ": " + row.why + mfu);
    }
    table.add_row(row.cells);
    list.push_back(std::move(row.json));
  }
  const double runs_n = static_cast<double>(list.size());
  const double share = list.empty() ? 0.0 : static_cast<double>(within) / runs_n;
  const double same_share = list.empty() ? 0.0 : static_cast<double>(within_same) / runs_n;
  if (options.json) {
    print_json({{"runs", list},
                {"within_10_percent", share},
                {"same_features_within_10_percent", same_share},
                {"claims_above_10_percent", claims},
                {"claims_within_measured_mfu", claims_within_reach},
                {"rejected", rejected_json(rejected)}});
    report_rejected(rejected, list.size(), options);
    return;
  }
  std::fputs(table.render({1, 2, 3, 5}).c_str(), stdout);
  if (!reasons.empty()) {
    std::printf("\nwhere we claim more than 10%% (the parts of the step behind it):\n");
    for (const auto& line : reasons) std::printf("- %s\n", line.c_str());
  }
  std::printf("\npublished plan within 10%% of our best plan in %d of %zu runs (%.0f%%)\n", within,
              list.size(), 100 * share);
  std::printf(
      "with the published run's recompute, ZeRO stage, sp, cp and ep kept: %d of %zu (%.0f%%)\n",
      within_same, list.size(), 100 * same_share);
  if (claims > 0) {
    std::printf(
        "claims of more than 10%% whose best plan runs at an MFU no higher than one measured on "
        "the same GPU and peak in this file: %d of %d\n",
        claims_within_reach, claims);
  }
  std::fflush(stdout);
  report_rejected(rejected, list.size(), options);
}

void run_validate(const ValidateOptions& options) {
  if (options.run) {
    run_executor_validation(options);
    return;
  }
  if (options.published.empty()) {
    throw Error("validate needs --published FILE (e.g. tests/data/published_runs.json)");
  }
  const PublishedRuns loaded = load_published_runs(options.published);
  std::vector<RejectedRun> rejected = loaded.rejected;
  for (const auto& run : loaded.runs) {
    if (run.ignored_keys.empty()) continue;
    std::string keys;
    for (const auto& key : run.ignored_keys) keys += (keys.empty() ? "" : ", ") + key;
    std::fprintf(stderr, "note: %s [%zu] %s: keys the format does not define, ignored: %s\n",
                 options.published.c_str(), run.index, run.id.c_str(), keys.c_str());
  }
  if (options.planner) {
    run_planner_regret(loaded.runs, rejected, options);
    return;
  }
  const auto results = predict_runs(loaded.runs, rejected);
  std::vector<double> all, core, memory;
  // Every published plan ran, so a prediction that it does not fit is a memory-model error
  // (or a plan key the source left out, such as recomputation).
  std::vector<std::string> not_fitting;
  Json list = Json::array();
  TextTable table({"run", "predicted s", "reference s", "error", "memory GiB", "ref GiB", "set"});
  for (const auto& r : results) {
    all.push_back(r.step_error);
    if (r.run->core) core.push_back(r.step_error);
    Json entry = {{"id", r.run->id},
                  {"predicted_step_time_s", r.estimate.step_time_s},
                  {"reference_step_time_s", r.run->reference_step_time_s},
                  {"step_time_error", r.step_error},
                  {"predicted_memory_gib", r.estimate.memory.peak_bytes / kGiB},
                  {"core_set", r.run->core},
                  {"uncertain", r.run->uncertain},
                  {"mfu", r.estimate.mfu},
                  {"fits", r.estimate.memory.fits},
                  {"breakdown", nullptr}};
    if (!r.estimate.memory.fits) not_fitting.push_back(r.run->id);
    Json breakdown = Json::object();
    for (const auto& [name, seconds] : r.estimate.breakdown.named()) breakdown[name] = seconds;
    entry["breakdown"] = breakdown;
    std::string ref_memory = "-";
    if (r.memory_error) {
      memory.push_back(*r.memory_error);
      entry["reference_memory_gib"] = *r.run->reference_memory_gib;
      entry["memory_error"] = *r.memory_error;
      ref_memory = fixed(*r.run->reference_memory_gib, 1);
    }
    list.push_back(entry);
    table.add_row({r.run->id, fixed(r.estimate.step_time_s, 3),
                   fixed(r.run->reference_step_time_s, 3), fixed(100 * r.step_error, 1) + "%",
                   fixed(r.estimate.memory.peak_bytes / kGiB, 1), ref_memory,
                   r.run->core ? "core" : "beyond-3d"});
  }
  const ErrorStats all_stats = error_stats(all);
  const ErrorStats core_stats = error_stats(core);
  const ErrorStats memory_stats = error_stats(memory);
  if (options.json) {
    print_json({{"runs", list},
                {"mape", all_stats.mape},
                {"median_ape", all_stats.median_ape},
                {"p90_ape", all_stats.p90_ape},
                {"all", stats_json(all_stats)},
                {"core", stats_json(core_stats)},
                {"memory", stats_json(memory_stats)},
                {"published_plans_not_fitting", not_fitting.size()},
                {"rejected", rejected_json(rejected)}});
    report_rejected(rejected, results.size(), options);
    return;
  }
  std::fputs(table.render({1, 2, 3, 4, 5}).c_str(), stdout);
  auto summary = [](const char* name, const ErrorStats& s) {
    std::printf("%-32s n=%-3d MAPE %5.1f%%  median %5.1f%%  p90 %5.1f%%  max %5.1f%%\n", name,
                s.count, 100 * s.mape, 100 * s.median_ape, 100 * s.p90_ape, 100 * s.max_ape);
  };
  std::printf("\n");
  summary("step time, all runs", all_stats);
  summary("step time, core (no MoE/cp/FSDP)", core_stats);
  summary("peak memory, runs with a reference", memory_stats);
  std::printf("published plans predicted not to fit in GPU memory (they ran): %zu of %zu",
              not_fitting.size(), results.size());
  for (std::size_t i = 0; i < not_fitting.size(); ++i) {
    std::printf("%s%s", i == 0 ? "\n  " : ", ", not_fitting[i].c_str());
  }
  std::printf("\n");
  if (!rejected.empty()) {
    std::printf("entries left out (errors on stderr): %zu\n", rejected.size());
  }
  std::fflush(stdout);
  report_rejected(rejected, results.size(), options);
}

}  // namespace

void register_validate(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  auto* cmd =
      app.add_subcommand("validate", "Check predictions against published or measured runs");
  cmd->add_option("--published", options->published,
                  "Published runs file (JSON array, see tests/data/published_runs.json)");
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->add_flag("--strict", options->strict,
                "Exit with code 1 when any entry cannot be evaluated (default: only when none "
                "can; the others are reported either way)");
  cmd->add_flag("--planner", options->planner,
                "Search each run's plan space and report the published plan's regret");
  cmd->add_option("--threads", options->threads, "Planner threads (default: all cores)");
  cmd->add_flag("--run", options->run,
                "Run a set of plans with the executor here and compare with predictions");
  cmd->add_option("--profile", options->profile, "CPU profile of this machine (with --run)");
  cmd->add_option("--ranks", options->ranks, "Cores to use for --run (default: all)");
  cmd->add_option("--steps", options->steps, "Steps per executor run (default 4)")
      ->check(CLI::Range(2, 100));
  cmd->add_flag("--quick", options->quick, "With --run: three plans only (a smoke run)");
  cmd->add_flag("--no-oversubscribed", options->no_oversubscribed,
                "Skip the plans with more ranks than cores");
  cmd->callback([options] { run_validate(*options); });
}

}  // namespace parplan::tools
