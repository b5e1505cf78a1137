// The validation error model's writer (error_model_writer.h).
#include "tools/error_model_writer.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/units.h"
#include "planner/prediction_interval.h"
#include "tools/published_runs.h"

namespace parplan::tools {

namespace {

// Six decimals of a log residual (a part in a million): the file stays identical across
// build types whose floating-point results differ in the last bits.
double rounded(double value) { return std::round(value * 1e6) / 1e6; }

Json check_json(const planner::CoverageCheck& c) {
  return {{"runs", c.runs},
          {"source_families", c.families},
          {"coverage", rounded(c.coverage)},
          {"median_half_width", rounded(c.median_half_width)}};
}

}  // namespace

planner::ErrorModel build_error_model(const std::vector<std::string>& files,
                                      std::map<std::string, std::string>* file_of_run) {
  planner::ErrorModel model;
  // A measurement that two files hold under one id (a table row that a file of published runs
  // also carries) is one run: the first file's entry counts, so no residual weighs twice. Both
  // entries must describe the same job: a repeated id whose prediction differs is an error.
  std::map<std::string, std::pair<std::string, double>> first;  // id -> file, predicted step
  for (const auto& file : files) {
    model.sources.push_back(file);
    const PublishedRuns loaded = load_published_runs(file);
    std::vector<RejectedRun> rejected = loaded.rejected;
    for (const auto& r : predict_runs(loaded.runs, rejected)) {
      const auto [seen, inserted] =
          first.emplace(r.run->id, std::pair{file, r.estimate.step_time_s});
      if (!inserted) {
        const double earlier = seen->second.second;
        if (std::fabs(r.estimate.step_time_s - earlier) > 1e-9 * earlier) {
          throw Error(file + ": run " + r.run->id + " is also in " + seen->second.first +
                      " with another job: predicted " + std::to_string(r.estimate.step_time_s) +
                      " s here, " + std::to_string(earlier) +
                      " s there; a repeated id must describe the same job");
        }
        continue;
      }
      if (file_of_run != nullptr) (*file_of_run)[r.run->id] = file;
      planner::ErrorModelRun run;
      run.id = r.run->id;
      run.source_family = run.id.substr(0, run.id.find('_'));
      run.features = planner::run_features(r.run->job);
      run.step_time_log_residual = rounded(std::log1p(r.step_error));
      if (r.memory_error) run.memory_log_residual = rounded(std::log1p(*r.memory_error));
      model.runs.push_back(std::move(run));
    }
    for (const auto& r : rejected) {
      std::fprintf(stderr, "note: %s [%zu] %s: left out of the error model: %s\n", file.c_str(),
                   r.index, r.id.c_str(), r.error.c_str());
    }
  }
  return model;
}

Json error_model_file_json(const planner::ErrorModel& model,
                           const std::map<std::string, std::string>& file_of_run) {
  Json out = planner::error_model_to_json(model);
  out["leave_one_family_out"] = {
      {"step_time", check_json(planner::leave_one_family_out(model, false))},
      {"peak_memory", check_json(planner::leave_one_family_out(model, true))}};
  // Step-time figures over each file's runs (every run still informs the others' intervals):
  // which sources the intervals are narrow for, and which wide.
  Json by_file = Json::object();
  for (const auto& file : model.sources) {
    const auto from_file = [&](const planner::ErrorModelRun& run) {
      const auto it = file_of_run.find(run.id);
      return it != file_of_run.end() && it->second == file;
    };
    by_file[file] = check_json(planner::leave_one_family_out(model, false, from_file));
  }
  out["leave_one_family_out"]["step_time"]["by_file"] = by_file;
  out["default_max_memory_fraction"] = rounded(planner::default_max_memory_fraction(model));
  return out;
}

void write_error_model(const std::vector<std::string>& files, const std::string& out) {
  check_not_overwriting_inputs(out, files);
  std::map<std::string, std::string> file_of_run;
  const planner::ErrorModel model = build_error_model(files, &file_of_run);
  const Json json = error_model_file_json(model, file_of_run);
  write_file_atomically(out, json.dump(1) + "\n");
  const Json& loo = json["leave_one_family_out"];
  std::printf("wrote %s: %zu runs from %zu files\n", out.c_str(), model.runs.size(), files.size());
  for (const char* what : {"step_time", "peak_memory"}) {
    const Json& c = loo[what];
    std::printf(
        "%s 80%% intervals, leave-one-source-family-out: %d runs of %d families, coverage "
        "%.1f%%, median half-width %.1f%%\n",
        what, c["runs"].get<int>(), c["source_families"].get<int>(),
        100 * c["coverage"].get<double>(), 100 * c["median_half_width"].get<double>());
  }
  for (const auto& [file, c] : loo["step_time"]["by_file"].items()) {
    std::printf("  step_time, runs of %s: %d, coverage %.1f%%, median half-width %.1f%%\n",
                file.c_str(), c["runs"].get<int>(), 100 * c["coverage"].get<double>(),
                100 * c["median_half_width"].get<double>());
  }
  std::printf("default --max-memory-fraction: %.3f\n",
              json["default_max_memory_fraction"].get<double>());
}

}  // namespace parplan::tools
