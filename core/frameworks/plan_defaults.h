// PlanDefaults: the plan keys a training framework fills when the job leaves them out (its
// recipes' settings, cited in core/frameworks/<name>.cpp), and apply_framework_plan_defaults,
// which fills them. `simulate` names the keys it filled (ParallelPlan::framework_default_keys).
// Tested in tests/core/parallel_plan_test.cpp and tests/core/frameworks_test.cpp.
#pragma once

#include <optional>

#include "core/framework.h"
#include "core/parallel_plan.h"
#include "core/training_spec.h"

namespace parplan {

// How a framework sizes micro-batches when the job leaves micro_batch_size out.
enum class MicroBatchDefault {
  Contract,  // the contract's default, 1
  // Without pipelining, the local batch (global_batch_size / dp) in one pass.
  LocalBatchWithoutPipelining,
  // The local batch as one micro-batch, or split into pp micro-batches when pipelining.
  LocalBatchSplitOverPp,
};

// Keys are filled in the order of the members (the order framework_default_keys lists them).
struct PlanDefaults {
  std::optional<Recompute> recompute{};
  std::optional<int> zero_stage{};
  bool sequence_parallel_with_tp = false;  // sequence_parallel = (tp > 1)
  MicroBatchDefault micro_batch_size = MicroBatchDefault::Contract;
};

// Fills the keys of `plan` that the job did not give (ParallelPlan::was_given) with the
// framework's defaults and records them in plan.framework_default_keys.
void apply_framework_plan_defaults(Framework framework, ParallelPlan& plan,
                                   const TrainingSpec& training);

}  // namespace parplan
