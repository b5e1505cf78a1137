// The intervals and extrapolations of one prediction, rendered (prediction_trust.h).
#include "tools/prediction_trust.h"

#include <cctype>
#include <cstdio>
#include <optional>

#include "core/frameworks/registry.h"
#include "core/units.h"
#include "planner/framework_support.h"
#include "planner/prediction_interval.h"
#include "tools/cli_common.h"

namespace parplan::tools {

namespace {

Json interval_json(const std::optional<planner::PredictionInterval>& iv) {
  if (!iv) return nullptr;
  return Json::array({iv->low, iv->high});
}

// The job's extrapolations from the validation error model, and first, when its framework
// cannot launch the plan (core/frameworks/planner_support.h: a ZeRO stage, schedule,
// dimension or key it does not implement), a "framework-support" entry: the prediction then
// costs mechanisms the framework does not have.
std::vector<planner::Extrapolation> job_extrapolations(const Job& job,
                                                       const planner::RunFeatures& features) {
  std::vector<planner::Extrapolation> out;
  if (const auto tag =
          planner::unsupported_by_framework(job.framework, job.plan, job.model.moe.has_value())) {
    out.push_back({"framework-support",
                   std::string(framework_info(job.framework).name) + " cannot launch this plan (" +
                       std::string(*tag) +
                       "): predicted from the mechanisms anyway; plan proposes only plans the "
                       "framework runs"});
  }
  const auto found = planner::find_extrapolations(planner::embedded_error_model(), features);
  out.insert(out.end(), found.begin(), found.end());
  return out;
}

}  // namespace

Json prediction_trust_to_json(const Job& job, const cost::StepEstimate& e) {
  const planner::ErrorModel& model = planner::embedded_error_model();
  const planner::RunFeatures features = planner::run_features(job);
  const auto step = planner::step_time_interval(model, features, e.step_time_s);
  const auto memory = planner::peak_memory_interval(model, features, e.memory.peak_bytes / kGiB);
  Json extrapolations = Json::array();
  for (const auto& x : job_extrapolations(job, features)) {
    extrapolations.push_back({{"kind", x.kind}, {"message", x.message}});
  }
  Json basis = Json::object();
  if (step) basis["step_time"] = {{"class", step->basis}, {"runs", step->runs}};
  if (memory) basis["peak_memory"] = {{"class", memory->basis}, {"runs", memory->runs}};
  return {{"step_time_interval_s", interval_json(step)},
          {"peak_memory_interval_gib", interval_json(memory)},
          {"interval_basis", basis},
          {"extrapolations", extrapolations}};
}

// The interval's low end is the prediction divided by the residual exp(r) of rank
// ceil(0.9 (n + 1)) among the n comparable runs, r = log(predicted / measured)
// (planner/prediction_interval.h): a prediction below its interval means that at least nine in
// ten of those runs (all of them when n <= 18) measured more than predicted; above it, less.
// The interval is then the better guess of the two.
std::string outside_interval_note(double value,
                                  const std::optional<planner::PredictionInterval>& interval,
                                  const char* what) {
  if (!interval || (value >= interval->low && value <= interval->high)) return "";
  const bool below = value < interval->low;
  return std::string("the ") + what + " prediction lies " + (below ? "below" : "above") +
         " its interval: at least nine in ten comparable validation runs measured " +
         (below ? "more" : "less") + " than predicted";
}

std::string extrapolations_line(const std::vector<planner::Extrapolation>& list) {
  std::string out;
  for (const auto& x : list) out += (out.empty() ? "" : "; ") + x.message;
  return out;
}

std::string prediction_trust_to_text(const Job& job, const cost::StepEstimate& e) {
  const planner::ErrorModel& model = planner::embedded_error_model();
  const planner::RunFeatures features = planner::run_features(job);
  const auto step = planner::step_time_interval(model, features, e.step_time_s);
  const auto memory = planner::peak_memory_interval(model, features, e.memory.peak_bytes / kGiB);
  std::string out;
  char line[512];
  if (step) {
    std::snprintf(line, sizeof line, "80%% interval   step %s to %s (%d validation runs: %s)\n",
                  human_seconds(step->low).c_str(), human_seconds(step->high).c_str(), step->runs,
                  step->basis.c_str());
    out += line;
    const std::string note = outside_interval_note(e.step_time_s, step, "step-time");
    if (!note.empty()) out += "               " + note + "\n";
  }
  if (memory) {
    std::snprintf(line, sizeof line, "%s peak memory %.1f to %.1f GiB (%d validation runs: %s)\n",
                  step ? "              " : "80% interval  ", memory->low, memory->high,
                  memory->runs, memory->basis.c_str());
    out += line;
    const std::string note =
        outside_interval_note(e.memory.peak_bytes / kGiB, memory, "peak-memory");
    if (!note.empty()) out += "               " + note + "\n";
  }
  const auto list = job_extrapolations(job, features);
  out += list.empty() ? "extrapolates   nothing: inside validated experience\n"
                      : "extrapolates   " + extrapolations_line(list) + "\n";
  return out;
}

std::vector<std::string> prediction_trust_sentences(const Job& job, const cost::StepEstimate& e,
                                                    const std::string& who) {
  const planner::ErrorModel& model = planner::embedded_error_model();
  const planner::RunFeatures features = planner::run_features(job);
  const auto step = planner::step_time_interval(model, features, e.step_time_s);
  const auto memory = planner::peak_memory_interval(model, features, e.memory.peak_bytes / kGiB);
  std::vector<std::string> out;
  char line[512];
  if (step && memory) {
    std::snprintf(line, sizeof line,
                  "80%% interval of %s: step %s to %s (%d validation runs: %s), peak memory "
                  "%.1f to %.1f GiB (%d runs: %s).",
                  who.c_str(), human_seconds(step->low).c_str(), human_seconds(step->high).c_str(),
                  step->runs, step->basis.c_str(), memory->low, memory->high, memory->runs,
                  memory->basis.c_str());
    out.emplace_back(line);
    for (const std::string& note :
         {outside_interval_note(e.step_time_s, step, "step-time"),
          outside_interval_note(e.memory.peak_bytes / kGiB, memory, "peak-memory")}) {
      if (!note.empty())
        out.push_back(std::string(1, static_cast<char>(std::toupper(note[0]))) + note.substr(1) +
                      ".");
    }
  }
  const auto list = job_extrapolations(job, features);
  out.push_back(list.empty() ? "The prediction of " + who + " lies inside validated experience."
                             : "The prediction of " + who +
                                   " extrapolates: " + extrapolations_line(list) + ".");
  return out;
}

}  // namespace parplan::tools
