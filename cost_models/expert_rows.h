// Token copies a GPU's routed experts compute on for one micro-batch: the one rule the step
// time (cost_models/layer_cost.cpp) and the activation memory (cost_models/activation_memory.cpp)
// share.
#pragma once

#include <algorithm>
#include <cstdint>

namespace parplan::cost {

struct ExpertRows {
  double dispatched = 0;    // tokens this GPU routes and dispatches
  double rows = 0;          // routed copies its experts receive (balanced routing)
  bool etp_gather = false;  // the expert-TP group all-gathers what its experts received
  // GPUs that route the same tokens (tp without sequence parallelism, else 1), and GPUs that
  // compute the same expert work (tp/etp of them when experts are narrower than tp without
  // sequence parallelism, else 1): model FLOPs count each once.
  double routing_copies = 1;
  double expert_work_copies = 1;
};

// With sequence parallelism each GPU routes and dispatches its own T/tp tokens (Megatron-Core
// requires sequence parallelism for MoE with tp > 1), else all T; an expert-tensor-parallel
// group of etp GPUs then all-gathers the tokens its experts received (MoEAlltoAllTokenDispatcher:
// all-to-all over ep, then all-gather over the expert-TP group; reduce-scatter and all-to-all
// back). The expert-TP group is the innermost etp ranks, as the tensor-parallel group is the
// innermost tp: with sequence parallelism its members hold etp different token sets; without it
// the members of one tensor-parallel group hold the same tokens, so it holds as many sets as
// the tensor-parallel groups it touches, ceil(etp/tp). Each token sends top_k copies: rows =
// dispatched * sets * top_k.
inline ExpertRows expert_rows(double tokens, int64_t tp, int64_t expert_tp, bool sequence_parallel,
                              int64_t top_k) {
  const bool sp = sequence_parallel && tp > 1;
  const int64_t token_sets = sp ? expert_tp : (expert_tp + tp - 1) / tp;
  ExpertRows out;
  out.dispatched = sp ? tokens / static_cast<double>(tp) : tokens;
  out.etp_gather = token_sets > 1;
  out.rows = out.dispatched * static_cast<double>(token_sets) * static_cast<double>(top_k);
  out.routing_copies = sp ? 1.0 : static_cast<double>(tp);
  out.expert_work_copies =
      sp ? 1.0 : std::max(1.0, static_cast<double>(tp) / static_cast<double>(expert_tp));
  return out;
}

}  // namespace parplan::cost
