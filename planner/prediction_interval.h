// 80% prediction intervals for step time and peak memory from the validation error model
// (error_model.h), split-conformal style: the job's comparable runs are found by a
// hierarchical back-off (the most specific class of runs sharing its framework family, GPU
// generation, dense/MoE, sharding, context parallelism and scale with at least
// kMinClassRuns runs, else a coarser class, else all runs), and the interval's bounds are the
// order statistics floor((n+1)*0.1) and ceil((n+1)*0.9) of that class's log residuals, so a
// small class gets a wide interval. The planner's default memory headroom is the memory
// residuals' one-sided 10% order statistic. Procedure and measured coverage:
// docs/intervals.md. Tested by tests/planner/prediction_interval_test.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planner/error_model.h"

namespace parplan::planner {

// Central 80% intervals: 10% of comparable runs below, 10% above (percent, so that the ranks
// are exact integer arithmetic).
inline constexpr int kIntervalTailPercent = 10;
// The fewest runs whose order statistic ceil((n+1)*0.9) exists (n >= 0.9 / 0.1).
inline constexpr int kMinClassRuns = 9;

// Ranks (1-based) of the order statistics floor((n+1)*0.1) and ceil((n+1)*0.9).
inline std::size_t low_rank(std::size_t n) { return (n + 1) * kIntervalTailPercent / 100; }
inline std::size_t high_rank(std::size_t n) {
  return ((n + 1) * (100 - kIntervalTailPercent) + 99) / 100;
}

struct PredictionInterval {
  double low = 0;
  double high = 0;
  std::string basis;  // the class of runs it comes from ("megatron, hopper, dense, 3D")
  int runs = 0;       // runs in that class
};

// The interval of the reference (measured) value around `predicted`; nullopt when the model
// holds fewer than kMinClassRuns runs (with a memory residual, for memory).
// `exclude_family`: leave out the runs of one source family (the honesty test).
std::optional<PredictionInterval> step_time_interval(const ErrorModel& model,
                                                     const RunFeatures& job, double predicted_s,
                                                     const std::string& exclude_family = "");
std::optional<PredictionInterval> peak_memory_interval(const ErrorModel& model,
                                                       const RunFeatures& job, double predicted_gib,
                                                       const std::string& exclude_family = "");

// The median of `values` (0 when empty).
double median_of(std::vector<double> values);

// Leave-one-source-family-out: for each family, intervals from the other families' runs.
struct CoverageCheck {
  int runs = 0;
  int families = 0;
  double coverage = 0;           // share of references inside their interval
  double median_half_width = 0;  // (high - low) / (2 * predicted), median over runs
};
// `counted`: the runs whose intervals enter the figures (all when empty); every run still
// serves as data for the others' intervals.
CoverageCheck leave_one_family_out(
    const ErrorModel& model, bool memory,
    const std::function<bool(const ErrorModelRun&)>& counted = nullptr);

// The share of GPU memory a plan may use so that its real peak fits with 90% confidence
// (one-sided): exp of the memory residuals' floor((n+1)*0.1) order statistic, at most 1.
// 1.0 when fewer than kMinClassRuns runs have a memory residual.
double default_max_memory_fraction(const ErrorModel& model);
// The embedded model's: the planner's default (plan, compare); the regret of published plans
// (regret.h) keeps 1.0, since those plans ran.
double recommended_max_memory_fraction();

}  // namespace parplan::planner
