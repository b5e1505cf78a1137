// Time of one layer's attention core for one micro-batch, the part between the QKV and the
// output projections: a measured attention kernel (a profile of the machine), flash attention
// at a share of the GPU's achievable matmul throughput, or the unfused chain of batched GEMMs
// and memory-bound softmax and dropout kernels. Part of the layer model (layer_cost.h);
// tested in tests/cost_models/step_model_test.cpp (FlashAttentionOneDesignIsSlowerOnAmpereOnly).
#pragma once

#include "cost_models/layer_cost.h"

namespace parplan::cost {

// Attention core for one micro-batch: (forward, backward) seconds and FLOPs.
struct AttentionCore {
  double forward = 0;
  double backward = 0;
  double model_flops_forward = 0;     // causal: half the score matrix
  double executed_flops_forward = 0;  // unfused kernels compute the whole matrix
};

AttentionCore attention_core(const CostContext& ctx);

}  // namespace parplan::cost
