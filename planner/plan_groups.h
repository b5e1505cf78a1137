// Distinct plans: plans that differ only in keys that leave the layout of the model on the
// GPUs unchanged fold into one group, so that a top 10 is not one layout ten times over.
// The layout keys are tp, cp, pp, dp, ep, micro_batch_size, sequence_parallel, recompute and
// whether parameters are sharded (ZeRO-3/FSDP); vpp, the schedule and ZeRO 0/1/2 (which
// shard optimizer state and gradients, not parameters), the MoE all-to-all overlap and the
// layer split over the stages (layers_per_stage) are variants of one layout. The
// planner keeps the best variant of each group (planner/search.h SearchOptions::distinct).
// Tested in tests/planner/plan_groups_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "core/parallel_plan.h"

namespace parplan::planner {

// tp, cp, pp, dp, ep, expert tp, micro_batch_size, sequence_parallel, recompute, parameters
// sharded.
using PlanGroupKey =
    std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, int, bool>;

PlanGroupKey plan_group_key(const ParallelPlan& plan);

// The keys that vary inside a group, for "folded N variants (vpp, zero_stage)".
inline constexpr const char* kFoldedKeys =
    "vpp, schedule, zero_stage 0-2, moe_a2a_overlap, layers_per_stage";

}  // namespace parplan::planner
