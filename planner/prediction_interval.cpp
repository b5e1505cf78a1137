// Back-off classes, conformal quantiles and the leave-one-family-out check
// (prediction_interval.h).
#include "planner/prediction_interval.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace parplan::planner {

namespace {

// Scale classes by GPU count: up to eight nodes (<= 64), hundreds (<= 1024), thousands.
int scale_bucket(int64_t gpus) { return gpus <= 64 ? 0 : gpus <= 1024 ? 1 : 2; }

const char* scale_name(int64_t gpus) {
  static const char* names[] = {"<= 64 GPUs", "65-1024 GPUs", "> 1024 GPUs"};
  return names[scale_bucket(gpus)];
}

// The features a class of comparable runs shares.
enum Feature : unsigned {
  kFamily = 1,
  kArchitecture = 2,
  kMoe = 4,
  kSharded = 8,
  kContextParallel = 16,
  kScale = 32,
};

// From the most specific class to all runs. The framework family comes first: its kernels and
// schedules set most of a run's error. Without enough runs of the family, the layout (dense or
// MoE, sharded or not) and the scale classes pool all frameworks. The order was chosen among a
// few hierarchies by the leave-one-family-out check (docs/intervals.md).
constexpr unsigned kBackoffLevels[] = {
    kFamily | kArchitecture | kMoe | kSharded | kContextParallel | kScale,
    kFamily | kArchitecture | kMoe | kSharded | kContextParallel,
    kFamily | kArchitecture | kMoe,
    kFamily | kMoe,
    kMoe | kSharded | kScale,
    kMoe | kSharded,
    0,
};

bool same_class(const RunFeatures& a, const RunFeatures& b, unsigned level) {
  return (!(level & kFamily) || a.family == b.family) &&
         (!(level & kArchitecture) || a.architecture == b.architecture) &&
         (!(level & kMoe) || a.moe == b.moe) && (!(level & kSharded) || a.sharded == b.sharded) &&
         (!(level & kContextParallel) || a.cp == b.cp) &&
         (!(level & kScale) || scale_bucket(a.gpus) == scale_bucket(b.gpus));
}

// "megatron, hopper, dense, no fsdp/zero3, no cp, 65-1024 GPUs".
std::string class_name(const RunFeatures& f, unsigned level) {
  if (level == 0) return "all validation runs";
  std::vector<std::string> parts;
  parts.push_back(level & kFamily ? f.family : "all frameworks");
  if (level & kArchitecture) parts.push_back(f.architecture);
  if (level & kMoe) parts.emplace_back(f.moe ? "moe" : "dense");
  if (level & kSharded) parts.emplace_back(f.sharded ? "fsdp/zero3" : "no fsdp/zero3");
  if (level & kContextParallel) parts.emplace_back(f.cp ? "cp" : "no cp");
  if (level & kScale) parts.emplace_back(scale_name(f.gpus));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The order statistic of rank k (1-based) of sorted values.
double order_statistic(const std::vector<double>& sorted, std::size_t k) {
  return sorted[std::clamp<std::size_t>(k, 1, sorted.size()) - 1];
}

std::optional<PredictionInterval> interval(const ErrorModel& model, const RunFeatures& job,
                                           double predicted, const std::string& exclude_family,
                                           bool memory) {
  for (const unsigned level : kBackoffLevels) {
    std::vector<double> residuals;
    for (const auto& run : model.runs) {
      if (!exclude_family.empty() && run.source_family == exclude_family) continue;
      if (!same_class(job, run.features, level)) continue;
      if (memory && !run.memory_log_residual) continue;
      residuals.push_back(memory ? *run.memory_log_residual : run.step_time_log_residual);
    }
    if (static_cast<int>(residuals.size()) < kMinClassRuns) continue;
    std::sort(residuals.begin(), residuals.end());
    const std::size_t n = residuals.size();
    // reference = predicted / exp(residual): the largest residual gives the lowest reference.
    PredictionInterval out;
    out.low = predicted * std::exp(-order_statistic(residuals, high_rank(n)));
    out.high = predicted * std::exp(-order_statistic(residuals, low_rank(n)));
    out.basis = class_name(job, level);
    out.runs = static_cast<int>(residuals.size());
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<PredictionInterval> step_time_interval(const ErrorModel& model,
                                                     const RunFeatures& job, double predicted_s,
                                                     const std::string& exclude_family) {
  return interval(model, job, predicted_s, exclude_family, false);
}

std::optional<PredictionInterval> peak_memory_interval(const ErrorModel& model,
                                                       const RunFeatures& job, double predicted_gib,
                                                       const std::string& exclude_family) {
  return interval(model, job, predicted_gib, exclude_family, true);
}

CoverageCheck leave_one_family_out(const ErrorModel& model, bool memory,
                                   const std::function<bool(const ErrorModelRun&)>& counted) {
  std::set<std::string> families;
  std::vector<double> half_widths;
  int inside = 0;
  for (const auto& run : model.runs) {
    if (memory && !run.memory_log_residual) continue;
    if (counted && !counted(run)) continue;
    families.insert(run.source_family);
    // Predicted 1, so the reference is exp(-residual).
    const double residual = memory ? *run.memory_log_residual : run.step_time_log_residual;
    const auto iv = interval(model, run.features, 1.0, run.source_family, memory);
    if (!iv) continue;
    const double reference = std::exp(-residual);
    if (reference >= iv->low && reference <= iv->high) ++inside;
    half_widths.push_back((iv->high - iv->low) / 2);
  }
  CoverageCheck out;
  out.runs = static_cast<int>(half_widths.size());
  out.families = static_cast<int>(families.size());
  if (half_widths.empty()) return out;
  out.coverage = inside / static_cast<double>(half_widths.size());
  out.median_half_width = median_of(std::move(half_widths));
  return out;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double default_max_memory_fraction(const ErrorModel& model) {
  std::vector<double> residuals;
  for (const auto& run : model.runs) {
    if (run.memory_log_residual) residuals.push_back(*run.memory_log_residual);
  }
  if (static_cast<int>(residuals.size()) < kMinClassRuns) return 1.0;
  std::sort(residuals.begin(), residuals.end());
  // Fits for real when predicted * exp(-residual) <= capacity, i.e. predicted <= capacity *
  // exp(residual): 90% of runs have a residual at least the 10% order statistic.
  return std::min(1.0, std::exp(order_statistic(residuals, low_rank(residuals.size()))));
}

double recommended_max_memory_fraction() {
  static const double fraction = default_max_memory_fraction(embedded_error_model());
  return fraction;
}

}  // namespace parplan::planner
