// What follows each pipeline stage's last backward pass: the data-parallel gradient reduction
// (overlapped with the last backward passes where the framework does so), the distributed
// optimizer's parameter all-gather, and the optimizer step over the parameters the GPU updates.
// Part of the step-time model (cost_models/step_model.h); tested in
// tests/cost_models/step_model_test.cpp and by `parplan validate --published`.
#pragma once

#include <vector>

#include "core/job.h"
#include "cost_models/framework_traits.h"
#include "cost_models/group_placement.h"
#include "cost_models/parameter_layout.h"
#include "cost_models/pipeline_sim.h"

namespace parplan::cost {

struct DataParallelUpdate {
  std::vector<double> exposed_s;    // per stage: reduction and gathers after its last backward
  std::vector<double> optimizer_s;  // per stage: the optimizer step
  double hidden_s = 0;              // the most reduction any stage hides under compute
};

// The group the dense gradients are reduced over: dp, and cp with it where the framework
// shards the optimizer over cp too (FrameworkTraits::cp_shards_optimizer).
GroupPlacement data_parallel_group(const ParallelPlan& plan, const NodeSpec& node,
                                   const FrameworkTraits& traits);

// Buckets one model chunk's `params_per_chunk` gradients are reduced in over a data-parallel
// group of `group_size` ranks (FrameworkTraits::dp_bucket_params; Megatron-Core keeps a
// gradient buffer per chunk): one collective each, each paying the collective's latency.
double dp_buckets_per_chunk(const FrameworkTraits& traits, int64_t group_size,
                            double params_per_chunk);

// The update of every stage, given when its pipeline work ends (`pipeline`). Under per-layer
// ZeRO-3/FSDP the gradients were reduce-scattered layer by layer and only the optimizer is left.
DataParallelUpdate data_parallel_update(const Job& job, const FrameworkTraits& traits,
                                        const std::vector<StageParameters>& stages,
                                        const PipelineResult& pipeline, bool per_layer_fsdp);

}  // namespace parplan::cost
