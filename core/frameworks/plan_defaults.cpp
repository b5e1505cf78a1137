#include "core/frameworks/plan_defaults.h"

#include <algorithm>

#include "core/frameworks/registry.h"

namespace parplan {

namespace {

std::optional<int64_t> default_micro_batch_size(MicroBatchDefault rule, const ParallelPlan& plan,
                                                const TrainingSpec& training) {
  const int64_t local = training.global_batch_size / std::max<int64_t>(1, plan.dp);
  switch (rule) {
    case MicroBatchDefault::LocalBatchWithoutPipelining:
      if (plan.pp == 1 && local >= 1) return local;
      break;
    case MicroBatchDefault::LocalBatchSplitOverPp: {
      const int64_t split = plan.pp > 1 ? plan.pp : 1;
      if (local >= split && local % split == 0) return local / split;
      break;
    }
    case MicroBatchDefault::Contract:
      break;
  }
  return std::nullopt;
}

}  // namespace

void apply_framework_plan_defaults(Framework framework, ParallelPlan& plan,
                                   const TrainingSpec& training) {
  const PlanDefaults& defaults = framework_info(framework).plan_defaults;
  // Whether the framework may fill `key`; records the keys it fills.
  auto fills = [&plan](const char* key) {
    if (plan.was_given(key)) return false;
    plan.framework_default_keys.emplace_back(key);
    return true;
  };
  if (defaults.recompute && fills("recompute")) plan.recompute = *defaults.recompute;
  if (defaults.zero_stage && fills("zero_stage")) plan.zero_stage = *defaults.zero_stage;
  if (defaults.sequence_parallel_with_tp && fills("sequence_parallel")) {
    plan.sequence_parallel = plan.tp > 1;
  }
  const auto micro_batch_size = default_micro_batch_size(defaults.micro_batch_size, plan, training);
  if (micro_batch_size && fills("micro_batch_size")) plan.micro_batch_size = *micro_batch_size;
}

}  // namespace parplan
