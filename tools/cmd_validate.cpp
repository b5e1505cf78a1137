// `parplan validate --published FILE [--json] [--strict]`: predicts every published run and
// reports predicted vs reference step time (and memory where known) with MAPE, median and p90.
// Entries that cannot be read or predicted are listed with their errors (stderr, and
// "rejected" in the JSON) and left out of the statistics; the exit code is 1 when no entry
// could be evaluated, or with --strict when any was rejected. With --planner it reports each
// published plan's regret against a search of its plan space (planner/regret.h); with --run it
// compares executor runs on this machine with their predictions.
#include <cstdio>
#include <thread>

#include "core/check.h"
#include "core/units.h"
#include "planner/regret.h"
#include "tools/calibration_option.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/error_model_writer.h"
#include "tools/published_runs.h"
#include "tools/report/why.h"
#include "tools/text_table.h"
#include "tools/validate_run.h"
#include "tools/validation_interval.h"

namespace parplan::tools {

namespace {

struct ValidateOptions {
  std::string published;
  std::vector<std::string> published_files;  // --published, repeatable with --write-error-model
  std::string write_error_model;
  bool json = false;
  bool planner = false;
  int threads = 0;
  std::string profile;
  bool run = false;
  bool reprofile = false;
  int ranks = 0;
  int steps = 4;
  bool no_oversubscribed = false;
  bool quick = false;
  bool strict = false;
  std::string calibration;  // --calibration CAL.json (tools/calibration_option.h)
};

// A calibration given to validate --published: it applies to the runs on its node types.
struct CalibrationUse {
  std::optional<CalibrationFile> file;
  std::size_t runs_calibrated = 0;
  std::size_t runs = 0;
};

std::size_t calibrate_matching_runs(std::vector<PublishedRun>& runs,
                                    const std::optional<CalibrationFile>& file) {
  std::size_t count = 0;
  for (auto& run : runs) {
    if (!file || !calibration_applies(*file, run.job)) continue;
    apply_calibration(run.job, file);
    ++count;
  }
  return count;
}

// The job of a validate --run entry as predicted, its node (the profile's figures) inline, so
// that `parplan calibrate` can predict it again.
Json predicted_job_json(const Job& job) {
  Json out = job_to_json(job);
  out["cluster"]["node"] = node_spec_to_json(job.cluster.node);
  return out;
}

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
  if (options.profile.empty() && !options.reprofile) {
    throw Error(
        "validate --run needs --profile PROFILE.json: a CPU profile of this machine "
        "(mpirun -np 2 parplan profile --backend cpu --quick --out PROFILE.json), or "
        "--reprofile to measure one right before each plan");
  }
  RunValidationOptions run;
  run.profile = options.profile;
  run.reprofile = options.reprofile;
  run.max_ranks = options.ranks;
  run.oversubscribed = !options.no_oversubscribed;
  run.steps = options.steps;
  run.calibration = load_calibration_option(options.calibration);
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
                    {"id", e.label},
                    {"label", e.label},
                    {"job", predicted_job_json(e.predicted_job)},
                    {"ranks", e.ranks},
                    {"oversubscribed", e.oversubscribed},
                    {"predicted_step_time_s", e.predicted_step_time_s},
                    {"reference_step_time_s", e.measured_step_time_s},
                    {"step_time_error", error},
                    {"predicted_memory_gib", e.predicted_memory_gib},
                    {"reference_memory_gib", e.measured_memory_gib},
                    {"memory_error", mem_error},
                    {"profiled_before_run", e.profiled_before_run},
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
    Json out = {
        {"runs", list},
        {"mape", s.mape},
        {"median_ape", s.median_ape},
        {"within_cores", stats_json(s)},
        {"oversubscribed", stats_json(o)},
        {"memory", stats_json(m)},
        {"cores", cores},
        {"profile", options.reprofile ? Json("measured before each run") : Json(options.profile)}};
    add_calibration_key(out, run.calibration);
    print_json(out);
    return;
  }
  if (run.calibration) std::printf("%s\n", calibration_line(run.calibration).c_str());
  std::fputs(table.render({1, 2, 3, 4, 5, 6}).c_str(), stdout);
  std::printf("\nstep time, ranks <= %d cores: n=%d median %.1f%% MAPE %.1f%% max %.1f%%\n", cores,
              s.count, 100 * s.median_ape, 100 * s.mape, 100 * s.max_ape);
  if (o.count > 0) {
    std::printf("step time, oversubscribed (time-shared cores): n=%d median %.1f%% MAPE %.1f%%\n",
                o.count, 100 * o.median_ape, 100 * o.mape);
  }
  if (m.count == 0) {
    std::printf("peak memory, ranks <= cores: none: no memory references\n");
  } else {
    std::printf("peak memory, ranks <= cores: median %.1f%% MAPE %.1f%%\n", 100 * m.median_ape,
                100 * m.mape);
  }
}

// "tp8 pp1 dp1 cp1 ep1 vpp1 mbs1 selective z1": every layout and feature key of a plan.
std::string plan_keys(const ParallelPlan& p) {
  return "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " dp" + std::to_string(p.dp) +
         " cp" + std::to_string(p.cp) + " ep" + std::to_string(p.ep) + " vpp" +
         std::to_string(p.vpp) + " mbs" + std::to_string(p.micro_batch_size) + " " +
         to_string(p.recompute) + " z" + std::to_string(p.zero_stage);
}

// The sentence behind a claim (tools/report/why.h): the best plan against the published one.
std::string explain_claim(const planner::RunRegret& row, const Job& published_job) {
  if (!row.is_claim()) return "";
  Job best_job = published_job;
  best_job.plan = row.best.plan;
  return compare_plans(ReportPlan{"best plan", "search", best_job, row.best.estimate, 1},
                       ReportPlan{"published plan", "job", published_job, row.published, 2});
}

// The JSON keys name the threshold: they must change with it.
static_assert(planner::kRegretClaimThreshold == 0.10, "JSON keys say within_10_percent");
static_assert(planner::kDefensibleClaimOverMeasured == 0.15,
              "JSON key says defensible_within_15_percent_of_measured");

Json regret_json(const planner::RunRegret& row, const PublishedRun& run) {
  return {{"id", run.id},
          {"published_plan_step_time_s", row.published.step_time_s},
          {"best_plan_step_time_s", row.best.estimate.step_time_s},
          {"best_plan_mfu", row.best.estimate.mfu},
          {"best_plan_over_measured", row.claim_over_measured()},
          {"best_plan_defensible", row.claim_defensible()},
          {"regret", row.regret},
          {"same_features_regret", row.same_features_regret},
          {"published_plan_fits", row.published.memory.fits},
          {"best_plan", parallel_plan_to_json(row.best.plan)},
          {"why", explain_claim(row, run.job)},
          {"highest_measured_mfu_same_gpu", row.highest_measured_mfu},
          {"highest_measured_mfu_run", row.highest_measured_mfu_run}};
}

void print_regret_json(const planner::RegretSummary& summary, const std::vector<PublishedRun>& runs,
                       const std::vector<RejectedRun>& rejected) {
  Json list = Json::array();
  for (const auto& row : summary.runs) list.push_back(regret_json(row, runs[row.run_index]));
  const double n = static_cast<double>(summary.runs.size());
  print_json(
      {{"runs", list},
       {"within_10_percent", n == 0 ? 0.0 : summary.within_threshold / n},
       {"same_features_within_10_percent",
        n == 0 ? 0.0 : summary.same_features_within_threshold / n},
       {"claims_above_10_percent", summary.claims},
       {"claims_within_measured_mfu", summary.claims_within_measured_mfu},
       {"defensible_within_15_percent_of_measured", n == 0 ? 0.0 : summary.defensible_claims / n},
       {"rejected", rejected_json(rejected)}});
}

void print_regret_text(const planner::RegretSummary& summary,
                       const std::vector<PublishedRun>& runs) {
  const std::string threshold = percent(planner::kRegretClaimThreshold, 0);
  TextTable table({"run", "published s", "best s", "regret", "best plan", "same features"});
  std::vector<std::string> reasons;
  for (const auto& row : summary.runs) {
    const PublishedRun& run = runs[row.run_index];
    table.add_row({run.id, fixed(row.published.step_time_s, 3),
                   fixed(row.best.estimate.step_time_s, 3), percent(row.regret),
                   plan_keys(row.best.plan), percent(row.same_features_regret)});
    if (!row.is_claim()) continue;
    char mfu[400];
    std::snprintf(mfu, sizeof mfu,
                  " Best plan MFU %.1f%%: %s the highest MFU measured on %s in this file, "
                  "%.1f%% (%s).",
                  100 * row.best.estimate.mfu, row.within_measured_mfu() ? "within" : "ABOVE",
                  row.gpu_peak.c_str(), 100 * row.highest_measured_mfu,
                  row.highest_measured_mfu_run.c_str());
    reasons.push_back(run.id + ": " + explain_claim(row, run.job) + mfu);
  }
  std::fputs(table.render({1, 2, 3, 5}).c_str(), stdout);
  if (!reasons.empty()) {
    std::printf("\nwhere we claim more than %s (the parts of the step behind it):\n",
                threshold.c_str());
    for (const auto& line : reasons) std::printf("- %s\n", line.c_str());
  }
  const std::size_t n = summary.runs.size();
  auto share = [n](int count) { return n == 0 ? 0.0 : count / static_cast<double>(n); };
  std::printf("\npublished plan within %s of our best plan in %d of %zu runs (%.0f%%)\n",
              threshold.c_str(), summary.within_threshold, n,
              100 * share(summary.within_threshold));
  std::printf(
      "with the published run's recompute, ZeRO stage, sp, cp and ep kept: %d of %zu (%.0f%%)\n",
      summary.same_features_within_threshold, n,
      100 * share(summary.same_features_within_threshold));
  if (summary.claims > 0) {
    std::printf(
        "claims of more than %s whose best plan runs at an MFU no higher than one measured on "
        "the same GPU and peak in this file: %d of %d\n",
        threshold.c_str(), summary.claims_within_measured_mfu, summary.claims);
  }
  std::printf(
      "best plan no slower than the published plan's prediction and at most %s faster than "
      "measured: %d of %zu (%.0f%%)\n",
      percent(planner::kDefensibleClaimOverMeasured, 0).c_str(), summary.defensible_claims, n,
      100 * share(summary.defensible_claims));
  std::fflush(stdout);
}

// validate --planner: the published plans' regret against our search (planner/regret.h).
void run_planner_regret(const std::vector<PublishedRun>& runs, std::vector<RejectedRun> rejected,
                        const ValidateOptions& options) {
  std::vector<planner::MeasuredRun> measured;
  for (const auto& run : runs) measured.push_back({run.id, run.job, run.reference_step_time_s});
  const planner::RegretSummary summary = planner::analyse_regret(measured, options.threads);
  for (const auto& failed : summary.failed) {
    rejected.push_back({runs[failed.run_index].index, runs[failed.run_index].id, failed.error});
  }
  if (options.json) {
    print_regret_json(summary, runs, rejected);
  } else {
    print_regret_text(summary, runs);
  }
  report_rejected(rejected, summary.runs.size(), options);
}

// One run's JSON entry: its prediction, reference, error, memory and breakdown, and the 80%
// step-time interval it is held against (validation_interval.h), counted in `coverage`.
Json published_run_entry(const RunResult& r, IntervalCoverage& coverage) {
  Json entry = {{"id", r.run->id},
                {"predicted_step_time_s", r.estimate.step_time_s},
                {"reference_step_time_s", r.run->reference_step_time_s},
                {"step_time_error", r.step_error},
                {"predicted_memory_gib", r.estimate.memory.peak_bytes / kGiB},
                {"core_set", r.run->core},
                {"uncertain", r.run->uncertain},
                {"mfu", r.estimate.mfu},
                {"fits", r.estimate.memory.fits},
                {"step_time_interval_s", nullptr},
                {"inside_step_time_interval", nullptr},
                {"interval_left_out_family", nullptr},
                {"breakdown", nullptr}};
  if (const auto iv = validation_step_interval(r.run->job, r.run->id, r.estimate.step_time_s)) {
    entry["inside_step_time_interval"] =
        coverage.add(*iv, r.estimate.step_time_s, r.run->reference_step_time_s);
    entry["step_time_interval_s"] = Json::array({iv->interval.low, iv->interval.high});
    entry["interval_left_out_family"] =
        iv->left_out_family.empty() ? Json(nullptr) : Json(iv->left_out_family);
  }
  Json breakdown = Json::object();
  for (const auto& [name, seconds] : r.estimate.breakdown.named()) breakdown[name] = seconds;
  entry["breakdown"] = breakdown;
  if (r.memory_error) {
    entry["reference_memory_gib"] = *r.run->reference_memory_gib;
    entry["memory_error"] = *r.memory_error;
  }
  return entry;
}

// `calibrated`: runs whose prediction a calibration moved; their intervals still come from
// the uncalibrated validation residuals.
Json interval_coverage_json(const IntervalCoverage& c, std::size_t calibrated) {
  const bool any = c.runs > 0;
  return {{"runs", c.runs},
          {"inside", c.inside},
          {"coverage", any ? Json(c.coverage()) : Json(nullptr)},
          {"median_half_width", any ? Json(c.median_half_width()) : Json(nullptr)},
          {"runs_with_own_family_left_out", c.left_out},
          {"calibrated_runs", calibrated}};
}

// "80% step-time intervals: 55 of 65 measured times inside (84.6%), median half-width 12.1%"
// with how the intervals were formed.
void print_interval_coverage(const IntervalCoverage& c, std::size_t calibrated) {
  if (c.runs == 0) {
    std::printf("80%% step-time intervals: none (too few comparable validation runs)\n");
    return;
  }
  std::printf(
      "80%% step-time intervals: %d of %d measured times inside (%.1f%%), median half-width "
      "%.1f%%",
      c.inside, c.runs, 100 * c.coverage(), 100 * c.median_half_width());
  if (c.left_out > 0) {
    std::printf(
        "\n  (%d run%s of the embedded error model: each from the other source "
        "families' runs, leave-one-family-out)",
        c.left_out, c.left_out == 1 ? "" : "s");
  }
  if (calibrated > 0) {
    std::printf(
        "\n  (%zu calibrated prediction%s: intervals from the uncalibrated residuals; "
        "in-sample where the calibration was fitted to these runs)",
        calibrated, calibrated == 1 ? "" : "s");
  }
  std::printf("\n");
}

// Predicted vs reference step time (and memory where known) of every published run.
void run_published_validation(const std::vector<PublishedRun>& runs,
                              std::vector<RejectedRun> rejected, const ValidateOptions& options,
                              const CalibrationUse& calibration) {
  const auto results = predict_runs(runs, rejected);
  std::vector<double> all, core, memory;
  // Every published plan ran, so a prediction that it does not fit is a memory-model error
  // (or a plan key the source left out, such as recomputation).
  std::vector<std::string> not_fitting;
  Json list = Json::array();
  IntervalCoverage coverage;
  TextTable table({"run", "predicted s", "reference s", "error", "memory GiB", "ref GiB", "set"});
  for (const auto& r : results) {
    all.push_back(r.step_error);
    if (r.run->core) core.push_back(r.step_error);
    if (!r.estimate.memory.fits) not_fitting.push_back(r.run->id);
    std::string ref_memory = "-";
    if (r.memory_error) {
      memory.push_back(*r.memory_error);
      ref_memory = fixed(*r.run->reference_memory_gib, 1);
    }
    list.push_back(published_run_entry(r, coverage));
    table.add_row({r.run->id, fixed(r.estimate.step_time_s, 3),
                   fixed(r.run->reference_step_time_s, 3), fixed(100 * r.step_error, 1) + "%",
                   fixed(r.estimate.memory.peak_bytes / kGiB, 1), ref_memory,
                   r.run->core ? "core" : "beyond-3d"});
  }
  const ErrorStats all_stats = error_stats(all);
  const ErrorStats core_stats = error_stats(core);
  const ErrorStats memory_stats = error_stats(memory);
  if (options.json) {
    Json out = {{"runs", list},
                {"mape", all_stats.mape},
                {"median_ape", all_stats.median_ape},
                {"p90_ape", all_stats.p90_ape},
                {"all", stats_json(all_stats)},
                {"core", stats_json(core_stats)},
                {"memory", stats_json(memory_stats)},
                {"published_plans_not_fitting", not_fitting.size()},
                {"step_time_interval_coverage",
                 interval_coverage_json(coverage, calibration.runs_calibrated)},
                {"rejected", rejected_json(rejected)}};
    if (calibration.file) {
      out["calibration"] = calibration_summary_json(*calibration.file);
      out["calibration"]["runs_calibrated"] = calibration.runs_calibrated;
    }
    print_json(out);
    report_rejected(rejected, results.size(), options);
    return;
  }
  std::fputs(table.render({1, 2, 3, 4, 5}).c_str(), stdout);
  // An empty set has no error to report: it is named, not given a MAPE of 0.
  auto summary = [](const char* name, const ErrorStats& s, const char* when_empty) {
    if (s.count == 0) {
      std::printf("%-32s none: %s\n", name, when_empty);
      return;
    }
    std::printf("%-32s n=%-3d MAPE %5.1f%%  median %5.1f%%  p90 %5.1f%%  max %5.1f%%\n", name,
                s.count, 100 * s.mape, 100 * s.median_ape, 100 * s.p90_ape, 100 * s.max_ape);
  };
  std::printf("\n");
  summary("step time, all runs", all_stats, "no runs");
  summary("step time, core (no MoE/cp/FSDP)", core_stats, "no core runs");
  summary("peak memory, runs with a reference", memory_stats, "no memory references");
  print_interval_coverage(coverage, calibration.runs_calibrated);
  std::printf("published plans predicted not to fit in GPU memory (they ran): %zu of %zu",
              not_fitting.size(), results.size());
  for (std::size_t i = 0; i < not_fitting.size(); ++i) {
    std::printf("%s%s", i == 0 ? "\n  " : ", ", not_fitting[i].c_str());
  }
  std::printf("\n");
  if (!rejected.empty()) {
    std::printf("entries left out (errors on stderr): %zu\n", rejected.size());
  }
  if (calibration.file) {
    std::printf("%s; applied to %zu of %zu runs (those on its node type)\n",
                calibration_line(calibration.file).c_str(), calibration.runs_calibrated,
                calibration.runs);
  }
  std::fflush(stdout);
  report_rejected(rejected, results.size(), options);
}

void run_validate(const ValidateOptions& options) {
  if (options.run) {
    run_executor_validation(options);
    return;
  }
  if (!options.write_error_model.empty()) {
    write_error_model(options.published_files, options.write_error_model);
    return;
  }
  if (options.published.empty()) {
    throw Error("validate needs --published FILE (e.g. tests/data/published_runs.json)");
  }
  PublishedRuns loaded = load_published_runs(options.published);
  const auto calibration = load_calibration_option(options.calibration);
  const std::size_t calibrated = calibrate_matching_runs(loaded.runs, calibration);
  for (const auto& run : loaded.runs) {
    if (run.ignored_keys.empty()) continue;
    std::string keys;
    for (const auto& key : run.ignored_keys) keys += (keys.empty() ? "" : ", ") + key;
    std::fprintf(stderr, "note: %s [%zu] %s: keys the format does not define, ignored: %s\n",
                 options.published.c_str(), run.index, run.id.c_str(), keys.c_str());
  }
  if (options.planner) {
    run_planner_regret(loaded.runs, loaded.rejected, options);
  } else {
    run_published_validation(loaded.runs, loaded.rejected, options,
                             {calibration, calibrated, loaded.runs.size()});
  }
}

}  // namespace

void register_validate(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  auto* cmd =
      app.add_subcommand("validate", "Check predictions against published or measured runs");
  cmd->add_option("--published", options->published_files,
                  "Published runs file (JSON array, see tests/data/published_runs.json); "
                  "repeatable with --write-error-model");
  cmd->add_option("--write-error-model", options->write_error_model,
                  "Write the validation error model of all --published files to this file "
                  "(tools/error_model.sh; docs/intervals.md)");
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
  cmd->add_flag("--reprofile", options->reprofile,
                "With --run: measure the profile again right before each plan (mpirun -np 2 "
                "parplan profile --backend cpu --quick), so the machine's load moves the "
                "prediction and the run together");
  cmd->add_option("--ranks", options->ranks, "Cores to use for --run (default: all)");
  cmd->add_option("--steps", options->steps, "Steps per executor run (default 4)")
      ->check(CLI::Range(2, 100));
  add_calibration_option(cmd, options->calibration);
  cmd->add_flag("--quick", options->quick, "With --run: three plans only (a smoke run)");
  cmd->add_flag("--no-oversubscribed", options->no_oversubscribed,
                "Skip the plans with more ranks than cores");
  cmd->callback([options] {
    if (options->published_files.size() > 1 && options->write_error_model.empty()) {
      throw CLI::ValidationError("--published", "more than one file needs --write-error-model");
    }
    if (!options->published_files.empty()) options->published = options->published_files.front();
    run_validate(*options);
  });
}

}  // namespace parplan::tools
