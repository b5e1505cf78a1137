// What would make a job fit when the planner finds no plan: the fewest nodes of the job's
// node type on which some plan fits in memory, and, when no plan is even valid, the factor of
// the GPU count that blocks every plan (16,128 GPUs = 2^8 x 3^2 x 7: the 7 fits neither the
// heads, the batch nor the layers). Both keep the user's --fix and look only at memory and
// the plan rules (no step times), so they cost a few plan-space enumerations.
// Tested in tests/planner/dead_end_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "planner/search.h"

namespace parplan::planner {

// The largest cluster looked at: 2^20 GPUs, about five times the largest announced training
// clusters (2025).
inline constexpr int64_t kMaxDeadEndGpus = int64_t{1} << 20;

struct LeastMemoryPlan {
  ParallelPlan plan;
  double peak_bytes = 0;
};

// The valid plan of the job's space (with `fixes`) needing the least memory per GPU; none
// when no plan is valid.
std::optional<LeastMemoryPlan> least_memory_plan(const Job& job, const PlanFixes& fixes,
                                                 const SpaceLimits& limits, int threads);

struct FittingCluster {
  int64_t num_nodes = 0;
  int64_t num_gpus = 0;
  LeastMemoryPlan plan;  // the plan with the least memory there (one node fewer does not fit)
};

// The fewest whole nodes, more than the job has, on which a plan fits in
// max_memory_fraction of GPU memory: doubles the node count until one fits, then bisects
// between the last that did not and the first that did (plan rules make fit not strictly
// monotone in the node count, so a smaller count may exist that the bisection skipped).
std::optional<FittingCluster> smallest_fitting_cluster(const Job& job,
                                                       const SearchOptions& options);

struct BlockingFactor {
  int64_t factor = 0;         // the smallest divisor of the GPU count whose removal helps
  int64_t gpus_without = 0;   // num_gpus / factor, on which valid plans exist
  std::string factorization;  // of num_gpus: "2^8 x 3^2 x 7"
};

// When no plan is valid on the job's GPUs: the smallest factor F of the GPU count such that
// num_gpus / F GPUs have valid plans (at most the 32 smallest divisors are tried).
std::optional<BlockingFactor> blocking_factor(const Job& job, const SearchOptions& options);

// "2^8 x 3^2 x 7".
std::string prime_factorization(int64_t n);

// The job on another cluster of its node type: `num_gpus` GPUs on whole nodes where they fill
// them, else one partial node.
Job with_gpus(const Job& job, int64_t num_gpus);

}  // namespace parplan::planner
