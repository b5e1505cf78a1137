// `parplan validate --published FILE [--json]`: predicts every published run and reports
// predicted vs reference step time (and memory where known) with MAPE, median and p90.
#include <cstdio>

#include "core/check.h"
#include "core/units.h"
#include "planner/search.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/published_runs.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

struct ValidateOptions {
  std::string published;
  bool json = false;
  bool planner = false;
  int threads = 0;
  std::string profile;
};

// For every run: search the plan space of its model, cluster and training, and compare the
// published plan's predicted time with the best plan's ("regret": how much faster we claim
// to be; experts tuned the published plans, so large regrets point at the model).
void run_planner_regret(const std::vector<PublishedRun>& runs, const ValidateOptions& options) {
  Json list = Json::array();
  TextTable table({"run", "published s", "best s", "regret", "best plan"});
  int within = 0;
  for (const auto& run : runs) {
    const cost::StepEstimate published = cost::estimate_step(run.job);
    planner::SearchOptions search;
    search.top_k = 1;
    search.threads = options.threads;
    const planner::SearchResult r = planner::search_plans(run.job, search);
    if (r.top.empty()) continue;
    const auto& best = r.top.front();
    // The published plan may lie outside our default space (or not fit our memory model);
    // the best of the two is the reference.
    const double best_s = std::min(best.estimate.step_time_s, published.step_time_s);
    const double regret = published.step_time_s / best_s - 1.0;
    if (regret <= 0.10) ++within;
    list.push_back({{"id", run.id},
                    {"published_plan_step_time_s", published.step_time_s},
                    {"best_plan_step_time_s", best.estimate.step_time_s},
                    {"regret", regret},
                    {"published_plan_fits", published.memory.fits},
                    {"best_plan", parallel_plan_to_json(best.plan)}});
    const auto& p = best.plan;
    table.add_row({run.id, fixed(published.step_time_s, 3), fixed(best.estimate.step_time_s, 3),
                   percent(regret),
                   "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " dp" +
                       std::to_string(p.dp) + " cp" + std::to_string(p.cp) + " ep" +
                       std::to_string(p.ep) + " vpp" + std::to_string(p.vpp) + " mbs" +
                       std::to_string(p.micro_batch_size) + " " + to_string(p.recompute) + " z" +
                       std::to_string(p.zero_stage)});
  }
  const double share =
      list.empty() ? 0.0 : static_cast<double>(within) / static_cast<double>(list.size());
  if (options.json) {
    print_json({{"runs", list}, {"within_10_percent", share}});
    return;
  }
  std::fputs(table.render({1, 2, 3}).c_str(), stdout);
  std::printf("\npublished plan within 10%% of our best plan in %d of %zu runs (%.0f%%)\n", within,
              list.size(), 100 * share);
}

Json stats_json(const ErrorStats& s) {
  return {{"count", s.count},
          {"mape", s.mape},
          {"median_ape", s.median_ape},
          {"p90_ape", s.p90_ape},
          {"max_ape", s.max_ape}};
}

void run_validate(const ValidateOptions& options) {
  if (options.published.empty()) {
    throw Error("validate needs --published FILE (e.g. tests/data/published_runs.json)");
  }
  const auto runs = load_published_runs(options.published);
  if (options.planner) {
    run_planner_regret(runs, options);
    return;
  }
  const auto results = predict_runs(runs);
  std::vector<double> all, core, memory;
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
                  {"breakdown", nullptr}};
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
                {"memory", stats_json(memory_stats)}});
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
}

}  // namespace

void register_validate(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  auto* cmd =
      app.add_subcommand("validate", "Check predictions against published or measured runs");
  cmd->add_option("--published", options->published,
                  "Published runs file (JSON array, see tests/data/published_runs.json)");
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->add_flag("--planner", options->planner,
                "Search each run's plan space and report the published plan's regret");
  cmd->add_option("--threads", options->threads, "Planner threads (default: all cores)");
  cmd->callback([options] { run_validate(*options); });
}

}  // namespace parplan::tools
