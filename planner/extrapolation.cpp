// Where a job lies outside the validation runs (extrapolation.h).
#include "planner/extrapolation.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "planner/prediction_interval.h"

namespace parplan::planner {

namespace {

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Plan key values sort numerically where they are numbers ("2" before "16").
struct ByValue {
  bool operator()(const std::string& a, const std::string& b) const {
    const bool an = !a.empty() && std::isdigit(static_cast<unsigned char>(a[0]));
    const bool bn = !b.empty() && std::isdigit(static_cast<unsigned char>(b[0]));
    if (an && bn && a.size() != b.size()) return a.size() < b.size();
    return a < b;
  }
};

void check_features(const std::vector<const RunFeatures*>& family_runs, const RunFeatures& job,
                    std::vector<Extrapolation>& out) {
  bool each_validated = true;
  for (const auto& feature : job.features) {
    const bool seen = std::any_of(family_runs.begin(), family_runs.end(),
                                  [&](const RunFeatures* r) { return has(r->features, feature); });
    if (seen) continue;
    each_validated = false;
    out.push_back({"feature", feature + ": no validation run of the " + job.family +
                                  " framework family uses it"});
  }
  if (!each_validated || job.features.size() < 2) return;
  const bool together = std::any_of(family_runs.begin(), family_runs.end(), [&](auto* r) {
    return std::all_of(job.features.begin(), job.features.end(),
                       [&](const std::string& f) { return has(r->features, f); });
  });
  if (together) return;
  std::set<std::string> names(job.features.begin(), job.features.end());
  out.push_back({"feature-combination", joined(names) + ": no validation run of the " + job.family +
                                            " framework family uses them together"});
}

void check_plan_keys(const std::vector<const RunFeatures*>& family_runs, const RunFeatures& job,
                     std::vector<Extrapolation>& out) {
  for (const auto& [key, value] : job.plan) {
    std::set<std::string, ByValue> published;
    for (const RunFeatures* r : family_runs) {
      const auto it = r->plan.find(key);
      if (it != r->plan.end()) published.insert(it->second);
    }
    if (published.count(value) > 0) continue;
    std::string list;
    for (const auto& v : published) list += (list.empty() ? "" : ", ") + v;
    out.push_back({"plan-key", key + " " + value + ": no validation run of the " + job.family +
                                   " framework family used it (validated: " + list + ")"});
  }
}

}  // namespace

std::vector<Extrapolation> find_extrapolations(const ErrorModel& model, const RunFeatures& job) {
  std::vector<Extrapolation> out;
  std::vector<const RunFeatures*> family_runs;
  bool gpu_seen = false;
  int family_memory_runs = 0;
  int64_t largest = 0;
  for (const auto& run : model.runs) {
    gpu_seen = gpu_seen || run.features.gpu == job.gpu;
    if (run.features.family != job.family) continue;
    family_runs.push_back(&run.features);
    family_memory_runs += run.memory_log_residual.has_value() ? 1 : 0;
    largest = std::max(largest, run.features.gpus);
  }
  if (!gpu_seen) {
    out.push_back({"gpu", job.gpu + ": no validation run on this GPU"});
  }
  if (family_runs.empty()) {
    out.push_back({"framework", job.framework + ": no validation run of its framework family (" +
                                    job.family + ")"});
    return out;
  }
  if (job.gpus > largest) {
    out.push_back({"scale", std::to_string(job.gpus) +
                                " GPUs: above the largest validation run "
                                "of the " +
                                job.family + " framework family (" + std::to_string(largest) +
                                " GPUs)"});
  }
  check_features(family_runs, job, out);
  check_plan_keys(family_runs, job, out);
  // The memory interval's class needs kMinClassRuns runs with a measured peak; with fewer in
  // the family it comes from other frameworks' runs.
  if (family_memory_runs == 0) {
    out.push_back({"memory", "peak memory: no validation run of the " + job.family +
                                 " framework family measured its peak (the memory interval "
                                 "comes from other frameworks' runs)"});
  } else if (family_memory_runs < kMinClassRuns) {
    out.push_back({"memory", "peak memory: " + std::to_string(family_memory_runs) +
                                 " validation runs of the " + job.family +
                                 " framework family measured their peak, fewer than " +
                                 std::to_string(kMinClassRuns) +
                                 " (the memory interval comes from other frameworks' runs too)"});
  }
  return out;
}

}  // namespace parplan::planner
