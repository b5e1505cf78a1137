// Low-rank adapters (Hu et al. 2021, "LoRA", §4): each adapted projection W (in x out) gains
// A (in x r) and B (r x out); W is frozen. Adapted projections follow Hugging Face PEFT's
// usual target set for Llama-style models: q, k, v, o and the MLP matrices (gate, up, down
// for SwiGLU; fc1, fc2 for GELU); MoE experts and the embeddings stay frozen without adapters.
// Under tensor parallelism a column-parallel projection keeps A whole and splits B, a
// row-parallel one splits A and keeps B whole (NeMo / Megatron LoRA layout).
// Tested in tests/cost_models/lora_test.cpp against hand counts for Llama-3.1-8B and 70B.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model_spec.h"

namespace parplan::cost {

struct AdaptedProjection {
  const char* name;
  double in;   // input features (whole matrix)
  double out;  // output features (whole matrix)
  bool column_parallel;
};

// The adapted projections of one layer (MoE layers: attention only).
std::vector<AdaptedProjection> adapted_projections(const ModelSpec& model, bool moe_layer);

// Adapter parameters of one layer held by one GPU at tensor-parallel size tp.
double lora_layer_params(const ModelSpec& model, bool moe_layer, int64_t rank, int64_t tp);

// All adapter parameters of the model (tp = 1).
double lora_total_params(const ModelSpec& model, int64_t rank);

}  // namespace parplan::cost
