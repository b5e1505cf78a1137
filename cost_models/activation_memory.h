// Activation memory of one transformer layer for one micro-batch on one GPU, as the sum of
// the tensors the backward pass needs (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", §4 and Table 2), generalised to grouped-query
// attention, SwiGLU, flash attention, models without dropout and context parallelism.
// With a GPT layer (MHA, gelu, 4h MLP, dropout, no flash attention) it reproduces Table 2
// exactly; tests/cost_models/activation_memory_test.cpp checks every row.
#pragma once

#include <cstdint>

#include "core/model_spec.h"
#include "core/parallel_plan.h"

namespace parplan::cost {

struct ActivationOptions {
  int64_t micro_batch_size = 1;  // b
  int64_t seq_length = 1;        // s (whole sequence)
  int64_t tp = 1;                // t
  int64_t cp = 1;                // context-parallel shards of the sequence
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  bool flash_attention = true;  // no s^2 score, softmax or mask tensors
  bool dropout = false;         // hidden and attention dropout masks (1 byte each)
  double bytes_per_value = 2;   // 16-bit activations
  // Bytes per saved GEMM input (QKV, projection, FC1 and FC2 inputs, dispatched expert
  // tokens): 1 where fp8 GEMMs keep their fp8-cast input for the weight gradient (Transformer
  // Engine Linear / LayerNormLinear save the fp8 tensor), else 0 = bytes_per_value.
  double gemm_input_bytes = 0;
  // torchtitan-style selective recompute keeps only GEMM outputs of every other matmul; the
  // Megatron meaning (recompute the attention core) is the default.
  bool selective_keeps_half_gemm_outputs = false;
  // With selective recompute, Megatron's recomputed modules (ParallelPlan::recompute_modules
  // bits); 0 = the attention core alone.
  unsigned recompute_modules = 0;
  bool mla = false;  // multi-latent attention: Q, K and V come from up-projections
  // The MoE combine keeps the probability-weighted expert outputs for its backward
  // (FrameworkTraits::moe_combine_keeps_expert_outputs).
  bool moe_combine_keeps_expert_outputs = true;
};

struct LayerActivationBytes {
  double stored = 0;     // kept from the forward pass until this layer's backward
  double transient = 0;  // alive only while this layer is recomputed / back-propagated
};

// Bytes for one layer that is dense (MoE layers: see moe_layer_activation_bytes).
LayerActivationBytes dense_layer_activation_bytes(const ModelSpec& model,
                                                  const ActivationOptions& options);

// The same for an MoE layer: the routed copies its experts receive (cost_models/expert_rows.h)
// through expert MLPs of 1/expert_tp of their width, plus the shared experts.
LayerActivationBytes moe_layer_activation_bytes(const ModelSpec& model,
                                                const ActivationOptions& options, int64_t ep,
                                                int64_t expert_tp);

}  // namespace parplan::cost
