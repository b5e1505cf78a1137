// Intervals of validated runs and their coverage (validation_interval.h).
#include "tools/validation_interval.h"

#include "planner/error_model.h"

namespace parplan::tools {

std::optional<ValidationInterval> validation_step_interval(const Job& job, const std::string& id,
                                                           double predicted_s) {
  const planner::ErrorModel& model = planner::embedded_error_model();
  ValidationInterval out;
  for (const auto& run : model.runs) {
    if (run.id == id) {
      out.left_out_family = run.source_family;
      break;
    }
  }
  const auto iv = planner::step_time_interval(model, planner::run_features(job), predicted_s,
                                              out.left_out_family);
  if (!iv) return std::nullopt;
  out.interval = *iv;
  return out;
}

bool IntervalCoverage::add(const ValidationInterval& iv, double predicted_s, double reference_s) {
  const bool in = reference_s >= iv.interval.low && reference_s <= iv.interval.high;
  ++runs;
  inside += in;
  if (!iv.left_out_family.empty()) ++left_out;
  half_widths.push_back((iv.interval.high - iv.interval.low) / (2 * predicted_s));
  return in;
}

double IntervalCoverage::median_half_width() const { return planner::median_of(half_widths); }

}  // namespace parplan::tools
