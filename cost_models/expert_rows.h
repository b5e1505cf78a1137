// Token copies a GPU's routed experts compute on for one micro-batch: the one rule the step
// time (cost_models/layer_cost.cpp) and the activation memory (cost_models/activation_memory.cpp)
// share.
#pragma once

#include <cstdint>

namespace parplan::cost {

struct ExpertRows {
  double dispatched = 0;    // tokens this GPU routes and dispatches
  double rows = 0;          // routed copies its experts receive (balanced routing)
  bool etp_gather = false;  // the expert-TP group all-gathers what its experts received
};

// With sequence parallelism each GPU routes and dispatches its own T/tp tokens (Megatron-Core
// requires sequence parallelism for MoE with tp > 1), else all T; an expert-tensor-parallel
// group of etp GPUs then all-gathers the tokens its experts received (MoEAlltoAllTokenDispatcher:
// all-to-all over ep, then all-gather over the expert-TP group; reduce-scatter and all-to-all
// back). Each token sends top_k copies: T/tp * etp * top_k rows with sequence parallelism.
inline ExpertRows expert_rows(double tokens, int64_t tp, int64_t expert_tp, bool sequence_parallel,
                              int64_t top_k) {
  const bool sp = sequence_parallel && tp > 1;
  ExpertRows out;
  out.dispatched = sp ? tokens / static_cast<double>(tp) : tokens;
  out.etp_gather = sp && expert_tp > 1;
  out.rows = (out.etp_gather ? out.dispatched * static_cast<double>(expert_tp) : out.dispatched) *
             static_cast<double>(top_k);
  return out;
}

}  // namespace parplan::cost
