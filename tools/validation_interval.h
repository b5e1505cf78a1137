// The 80% step-time interval that `validate --published` holds each measured run against, and
// the share of runs inside their intervals: the honesty check of docs/intervals.md on any file
// of runs, a user's own included. A run that the embedded validation error model holds (same
// id) gets its interval from the other source families' runs only, leave-one-family-out as
// `validate --write-error-model` measures it, so that neither its own residual nor its
// publication's vouch for it; any other run gets the interval `simulate` gives its job.
// Tested in tests/tools/trust_cli_test.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "planner/prediction_interval.h"

namespace parplan::tools {

struct ValidationInterval {
  planner::PredictionInterval interval;
  // The run's source family, left out of the interval's data, when the error model holds the
  // run; empty otherwise.
  std::string left_out_family;
};

// nullopt when the error model has too few comparable runs (prediction_interval.h).
std::optional<ValidationInterval> validation_step_interval(const Job& job, const std::string& id,
                                                           double predicted_s);

// Measured times inside their intervals, over the runs that have one.
struct IntervalCoverage {
  int runs = 0;
  int inside = 0;
  int left_out = 0;                 // runs whose own source family was left out
  std::vector<double> half_widths;  // (high - low) / (2 predicted), one per run

  // Counts the run; returns whether its measured time lies inside the interval.
  bool add(const ValidationInterval& iv, double predicted_s, double reference_s);
  double coverage() const { return runs == 0 ? 0.0 : inside / static_cast<double>(runs); }
  double median_half_width() const;
};

}  // namespace parplan::tools
