// The plan space the planner searches: every combination of tp, cp, pp (dp derived), ep,
// vpp, micro-batch size, sequence parallelism, recomputation, ZeRO stage, schedule and (where
// the framework takes any split and the output layer is heavy) a layer split that lightens
// the last pipeline stage that the
// model, cluster and training allow, minus the parts the user pinned with --fix. Invalid
// combinations are counted by reason (core/parallel_plan.h check_plan), not silently skipped.
// Tested in tests/planner/plan_space_test.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"

namespace parplan::planner {

struct PlanFixes {
  std::optional<int64_t> tp, pp, dp, cp, ep, etp, vpp, micro_batch_size;
  std::optional<bool> sequence_parallel;
  std::optional<Recompute> recompute;
  std::optional<int> zero_stage;
  std::optional<ScheduleKind> schedule;
  std::optional<bool> moe_a2a_overlap;
};

// Parses "KEY=VALUE" strings (keys as in the job's plan; mbs is micro_batch_size). Throws
// InputError naming "--fix" for unknown keys or bad values, UsageError for a key given twice.
PlanFixes parse_fixes(const std::vector<std::string>& fixes);

// Throws InputError naming "--fix" when the pinned degrees cannot fill the cluster: their
// product must divide its GPUs (equal them when tp, cp, pp and dp are all pinned), the same
// rule `simulate` applies to a job's plan.
void check_fixes_fit_cluster(const Job& job, const PlanFixes& fixes);

// Bounds of the default space (docs/commands.md#plan); --fix can step outside them.
struct SpaceLimits {
  int64_t max_tp_nodes = 2;  // tp spans at most this many nodes
  int64_t max_cp = 16;
  int64_t min_tokens_per_cp_rank = 1024;  // cp shards of at least this many tokens
  int64_t max_vpp = 8;
  // 64: LLM Foundry publishes micro-batches of 18 to 40 sequences for its small models
  // (tests/data/benchmark_tables/llm_foundry_mpt.json).
  int64_t max_micro_batch_size = 64;
  // Uneven pipeline splits: the busiest model chunk holds at most this factor of the mean.
  double max_chunk_imbalance = 1.25;
  // Also the memory savers of Megatron-Core recipes where the framework (and the node) allow
  // them: activation offloading to host memory (ParallelPlan::offload_activation_layers: half,
  // or all but one, of the layers) and per-module recomputation (recompute_modules: the
  // norms with the MLP or the experts' activation, and MLA's up-projections). The search
  // turns it on only when no plan fits without it.
  bool memory_savers = false;
};

struct Enumeration {
  std::vector<ParallelPlan> plans;          // valid plans, in a fixed order
  std::map<std::string, int64_t> rejected;  // invalid combinations by reason
  // The first violation met for each reason, worded as simulate words it:
  // "plan.tp: found 3; allowed: a divisor of ...".
  std::map<std::string, std::string> examples;
  int64_t considered = 0;  // combinations looked at
};

// `threads` as SearchOptions::threads (planner/parallel_for.h: 0 is one per hardware thread);
// the result is the same for any count.
Enumeration enumerate_plans(const Job& job, const PlanFixes& fixes, const SpaceLimits& limits = {},
                            int threads = 1);

// Divisors of n in increasing order.
std::vector<int64_t> divisors(int64_t n);

}  // namespace parplan::planner
