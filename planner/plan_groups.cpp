#include "planner/plan_groups.h"

namespace parplan::planner {

PlanGroupKey plan_group_key(const ParallelPlan& plan) {
  // ZeRO-3 gathers parameters before each layer: a different communication pattern and
  // memory layout from stages 0-2, which keep every parameter on each data-parallel rank.
  const bool parameters_sharded = plan.zero_stage >= 3;
  return {plan.tp,
          plan.cp,
          plan.pp,
          plan.dp,
          plan.ep,
          plan.expert_tp(),
          plan.micro_batch_size,
          plan.sequence_parallel,
          static_cast<int>(plan.recompute),
          parameters_sharded};
}

}  // namespace parplan::planner
