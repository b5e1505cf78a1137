// Which parameters each GPU holds: layers per pipeline stage (uneven splits included), the
// tensor-parallel split of every matrix, experts spread over ep (and expert-tp), the
// embedding on the first stage and the output layer on the last, and the ZeRO shard groups
// for dense and expert parameters. Shared by the memory and time models.
// Tested in tests/cost_models/beyond_3d_test.cpp (FSDP memory closed form, largest layer).
#pragma once

#include <cstdint>
#include <vector>

#include "core/job.h"
#include "cost_models/framework_traits.h"

namespace parplan::cost {

struct StageParameters {
  int64_t stage = 0;
  int64_t num_layers = 0;  // transformer layers on this stage (all its model chunks)
  int64_t num_moe_layers = 0;
  double dense_params = 0;          // per GPU: attention, dense MLP, norms, router, shared experts,
                                    // embedding / output layer; replicated over dp (and cp)
  double expert_params = 0;         // per GPU: routed experts; replicated over expert-dp
  double embedding_params = 0;      // part of dense_params on stage 0 / the last stage
  double adapter_params = 0;        // LoRA: trainable adapters (dense and expert params frozen)
  double largest_layer_params = 0;  // per GPU, for FSDP's gathered working set: the layer's
                                    // parameters in a shard group of more than one GPU (a
                                    // group of one holds them whole: nothing to gather)
  int64_t dense_shard_group = 1;    // ZeRO shard size for dense parameters
  int64_t expert_shard_group = 1;   // ZeRO shard size for expert parameters
};

std::vector<StageParameters> stage_parameters(const Job& job);
// The same with the job's framework traits at hand (the planner's hot path).
std::vector<StageParameters> stage_parameters(const Job& job, const FrameworkTraits& traits);

struct ShardedBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double transient = 0;  // ZeRO-3: gathered 16-bit layer weights and one layer of gradients
};

ShardedBytes sharded_state_bytes(const StageParameters& stage, const ParallelPlan& plan,
                                 const FrameworkTraits& traits, const TrainingSpec& training);

}  // namespace parplan::cost
