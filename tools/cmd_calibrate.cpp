// `parplan calibrate --runs RUNS.json --out CAL.json [--node NAME] [--factors a,b] [--json]`:
// fits a few named physical factors (core/calibration.h) to measured runs by robust least
// squares on log step time, with the overfitting guard of cost_models/calibration_fit.h, and
// writes CAL.json: the factors with their values, bounds and why each was or was not fitted,
// the runs used (ids, file hash), the parplan version, the node type, the in-sample and
// leave-one-out errors before and after. Exit 2 when the runs cannot support the fit (fewer
// than 3, a requested factor they do not exercise or cannot identify). docs/calibration.md.
// Tested in tests/tools/calibrate_cli_test.cpp.
#include <cmath>
#include <cstdio>

#include "core/atomic_file.h"
#include "core/check.h"
#include "parplan/parplan_config.h"
#include "tools/calibration_runs.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/published_runs.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

struct CalibrateOptions {
  std::string runs;
  std::string out;
  std::string node;
  std::vector<std::string> factors;
  bool json = false;
};

const char* kSelectionRule =
    "at least 3 runs; at most one step-time factor per 3 runs (the memory factor needs 3 "
    "memory references); a factor is a candidate when a 10% change moves some run's step "
    "time by at least 0.5% (elasticity >= 0.05; the step overhead always) and less than 99% "
    "of its effect is that of the factors already chosen; forward selection keeps, each "
    "round, of the candidates whose fit (Cauchy loss, scale 0.05, started from the soft-L1 "
    "fit, on log step time, with a prior on each factor) lowers both the leave-one-out loss "
    "(PRESS) and the corrected Akaike "
    "information criterion (AICc), the one with the lowest PRESS; the per-micro-batch overhead "
    "only when requested";

double mape_of(const std::vector<double>& errors) { return error_stats(errors).mape; }

Json factors_json(const cost::CalibrationFit& fit) {
  Json out = Json::object();
  for (const auto& f : fit.factors) {
    Json entry = {{"value", f.value},
                  {"bounds", {f.bounds.min, f.bounds.max}},
                  {"fitted", f.fitted},
                  {"reason", f.reason}};
    // Chosen factors only: requested ones are fitted together, with no share of their own.
    if (f.reason.starts_with("chosen"))
      entry["explained_loss_fraction"] = f.explained_loss_fraction;
    out[to_string(f.factor)] = entry;
  }
  return out;
}

Json fit_json(const CalibrationRuns& runs, const cost::CalibrationFit& fit) {
  Json list = Json::array();
  std::vector<double> mem_before, mem_after;
  for (std::size_t i = 0; i < runs.samples.size(); ++i) {
    Json entry = {{"id", runs.samples[i].id},
                  {"measured_step_time_s", runs.samples[i].measured_step_time_s},
                  {"uncalibrated_error", fit.errors_before[i]},
                  {"calibrated_error", fit.errors_after[i]}};
    if (fit.memory_errors_before[i]) {
      entry["memory_uncalibrated_error"] = *fit.memory_errors_before[i];
      entry["memory_calibrated_error"] = *fit.memory_errors_after[i];
      mem_before.push_back(*fit.memory_errors_before[i]);
      mem_after.push_back(*fit.memory_errors_after[i]);
    }
    list.push_back(entry);
  }
  Json out = {{"uncalibrated_mape", mape_of(fit.errors_before)},
              {"calibrated_mape", mape_of(fit.errors_after)},
              {"runs", list}};
  if (!mem_before.empty()) {
    out["memory_uncalibrated_mape"] = mape_of(mem_before);
    out["memory_calibrated_mape"] = mape_of(mem_after);
  }
  return out;
}

Json leave_one_out_json(const CalibrationRuns& runs, const cost::CalibrationFitOptions& options) {
  const std::size_t n = runs.samples.size();
  if (n <= static_cast<std::size_t>(cost::kRunsPerFactor)) {
    return {{"available", false},
            {"reason", "needs at least " + std::to_string(cost::kRunsPerFactor + 1) +
                           " runs (each fold fits on the others)"}};
  }
  const cost::LeaveOneOut loo = cost::leave_one_out(runs.samples, options);
  Json list = Json::array();
  for (std::size_t i = 0; i < n; ++i) {
    list.push_back({{"id", runs.samples[i].id},
                    {"uncalibrated_error", loo.uncalibrated_errors[i]},
                    {"calibrated_error", loo.calibrated_errors[i]}});
  }
  return {{"available", true},
          {"uncalibrated_mape", loo.uncalibrated_mape},
          {"calibrated_mape", loo.calibrated_mape},
          {"runs", list}};
}

std::vector<CalibrationFactor> parse_factors(const std::vector<std::string>& names) {
  std::vector<CalibrationFactor> out;
  for (const auto& name : names) {
    for (const CalibrationFactor f : all_calibration_factors()) {
      if (name == to_string(f)) out.push_back(f);
    }
  }
  return out;
}

void print_text(const Json& cal, const std::string& out) {
  TextTable table({"factor", "value", "bounds", "fitted", "why"});
  for (const auto& [name, f] : cal["factors"].items()) {
    table.add_row(
        {name, fixed(f["value"].get<double>(), 4),
         fixed(f["bounds"][0].get<double>(), 3) + " .. " + fixed(f["bounds"][1].get<double>(), 3),
         f["fitted"].get<bool>() ? "yes" : "no", f["reason"].get<std::string>()});
  }
  std::fputs(table.render({1}).c_str(), stdout);
  const Json& fit = cal["fit"];
  std::printf(
      "\n%zu runs on %s: step-time MAPE %.1f%% uncalibrated, %.1f%% calibrated (in sample)\n",
      cal["runs"]["ids"].size(), cal["node_types"][0].get<std::string>().c_str(),
      100 * fit["uncalibrated_mape"].get<double>(), 100 * fit["calibrated_mape"].get<double>());
  const Json& loo = cal["leave_one_out"];
  if (loo["available"].get<bool>()) {
    std::printf(
        "leave-one-out (each run predicted by a fit to the others): MAPE %.1f%% -> %.1f%%\n",
        100 * loo["uncalibrated_mape"].get<double>(), 100 * loo["calibrated_mape"].get<double>());
  } else {
    std::printf("leave-one-out: not available: %s\n", loo["reason"].get<std::string>().c_str());
  }
  std::printf("wrote %s\n", out.c_str());
}

void run_calibrate(const CalibrateOptions& o) {
  check_not_overwriting_inputs(o.out, {o.runs});
  const CalibrationRuns runs = load_calibration_runs(o.runs, o.node);
  cost::CalibrationFitOptions options;
  options.requested = parse_factors(o.factors);
  Json cal;
  try {
    const cost::CalibrationFit fit = cost::fit_calibration(runs.samples, options);
    Json ids = Json::array();
    for (const auto& s : runs.samples) ids.push_back(s.id);
    cal = {{"format", "parplan-calibration"},
           {"parplan_version", PARPLAN_VERSION},
           {"node_types", runs.node_types},
           {"factors", factors_json(fit)},
           {"selection_rule", kSelectionRule},
           {"runs",
            {{"file", o.runs}, {"hash", runs.hash}, {"ids", ids}, {"left_out", runs.left_out}}},
           {"fit", fit_json(runs, fit)},
           {"leave_one_out", leave_one_out_json(runs, options)}};
  } catch (const cost::CalibrationRefused& e) {
    std::fprintf(stderr, "error: %s: cannot calibrate: %s\n", o.runs.c_str(), e.what());
    throw QuietExit{2};
  }
  write_file_atomically(o.out, cal.dump(2) + "\n");
  if (o.json) {
    print_json(cal);
  } else {
    print_text(cal, o.out);
  }
}

}  // namespace

void register_calibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate", "Fit a few physical factors of the cost model to your measured runs");
  cmd->add_option("--runs", o->runs,
                  "Measured runs: a published-runs file or `parplan validate --run --json` output")
      ->required();
  cmd->add_option("--out", o->out, "Calibration file to write (CAL.json)")->required();
  cmd->add_option("--node", o->node, "Use only the runs on this node type");
  std::vector<std::string> names;
  for (const CalibrationFactor f : all_calibration_factors()) names.push_back(to_string(f));
  cmd->add_option("--factors", o->factors,
                  "Fit exactly these factors, comma-separated (default: chosen by the rules)")
      ->delimiter(',')
      ->check(CLI::IsMember(names));
  cmd->add_flag("--json", o->json, "Print the calibration (CAL.json's content)");
  cmd->callback([o] { run_calibrate(*o); });
}

}  // namespace parplan::tools
