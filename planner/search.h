// The planner: enumerates the plan space (plan_space.h), rejects plans that do not fit in
// memory, bounds each remaining plan's step time from below by its busiest stage's work
// (no pipeline simulation needed), then evaluates plans in bound order in fixed-size batches
// until no remaining plan can enter the top K. Per-layer costs are computed once per
// (tp, cp, ep, micro-batch, sp, recompute) key. Results are identical for any thread count:
// every decision depends only on the sorted order and the batch boundaries. With `distinct`
// the top K are K distinct layouts (planner/plan_groups.h), each its best variant.
// Tested in tests/planner/search_test.cpp; speed in tests/bench/planner_bench.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "cost_models/step_model.h"
#include "planner/plan_space.h"

namespace parplan::planner {

enum class Objective {
  Throughput,      // shortest step time
  MemoryHeadroom,  // lowest peak memory (most headroom), ties by step time
};

struct SearchOptions {
  PlanFixes fixes;
  SpaceLimits limits;
  Objective objective = Objective::Throughput;
  double max_memory_fraction = 1.0;  // a plan fits when peak <= fraction * GPU memory
  int top_k = 10;
  // The top K are distinct layouts (planner/plan_groups.h): the best variant of each group.
  bool distinct = false;
  bool pareto = false;  // also compute the time-vs-memory Pareto front (evaluates every plan)
  int threads = 0;      // 0: one per hardware thread
  // Called after each batch with (plans evaluated so far, plans that may still need it).
  std::function<void(int64_t, int64_t)> progress;
};

struct RankedPlan {
  ParallelPlan plan;
  cost::StepEstimate estimate;
  // With SearchOptions::distinct: the other plans of its group that fit in memory.
  int64_t folded_variants = 0;
};

struct SearchResult {
  std::vector<RankedPlan> top;     // best first
  std::vector<RankedPlan> pareto;  // by increasing memory, when requested
  int64_t considered = 0;          // combinations enumerated
  int64_t valid = 0;               // passed the plan rules
  int64_t feasible = 0;            // valid and fit in memory
  int64_t evaluated = 0;           // step time computed (pipeline simulated)
  int64_t pruned_by_bound = 0;     // feasible, but their lower bound could not enter the top K
  std::map<std::string, int64_t> rejected;  // by reason, "out-of-memory" included
  // One plan's violation per rejection reason (Enumeration::examples).
  std::map<std::string, std::string> rejection_examples;
  // When plans are valid but none fits: the one needing the least memory, fully estimated.
  std::optional<RankedPlan> least_memory;
  int64_t folded_variants = 0;  // with distinct: variants folded into the listed plans
  int64_t layer_cost_keys = 0;  // distinct per-layer cost computations
  double search_time_s = 0;
  int threads = 1;
};

SearchResult search_plans(const Job& job, const SearchOptions& options);

}  // namespace parplan::planner
