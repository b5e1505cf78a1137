#include "cost_models/activation_memory.h"

#include "cost_models/expert_rows.h"

namespace parplan::cost {

namespace {

struct Dims {
  double tokens;  // T = b*s/cp on this GPU
  double rep;     // divisor for the regions outside tensor parallelism: 1 or 1/t with SP
  double t;       // tp
  double bpv;     // bytes per activation value
  double gib;     // bytes per saved GEMM-input value
  double mask;    // bytes per dropout-mask value (0 without dropout)
};

Dims dims_of(const ActivationOptions& o) {
  Dims d;
  d.tokens = static_cast<double>(o.micro_batch_size) * static_cast<double>(o.seq_length) /
             static_cast<double>(o.cp);
  d.t = static_cast<double>(o.tp);
  d.rep = o.sequence_parallel ? 1.0 / d.t : 1.0;
  d.bpv = o.bytes_per_value;
  d.gib = o.gemm_input_bytes > 0 ? o.gemm_input_bytes : o.bytes_per_value;
  d.mask = o.dropout ? 1.0 : 0.0;
  return d;
}

// Attention block, no recomputation (Korthikanti §4.1: 11sbh + 5as^2b for GPT).
struct AttentionParts {
  double replicated;    // LN1 input, QKV input, output dropout mask
  double gemm_outputs;  // Q, K, V
  double core;          // score/softmax/dropout tensors (or flash attention statistics)
  double output;        // attention output = projection input
};

AttentionParts attention_parts(const ModelSpec& m, const ActivationOptions& o, const Dims& d) {
  const double h = static_cast<double>(m.hidden_size);
  const double qw = static_cast<double>(m.query_width());
  const double kvw = static_cast<double>(m.kv_width());
  AttentionParts a;
  a.replicated = (d.bpv + d.gib + d.mask) * d.tokens * h * d.rep;
  a.gemm_outputs = d.bpv * d.tokens * (qw + 2 * kvw) / d.t;
  const double heads = static_cast<double>(m.num_attention_heads) / d.t;
  if (o.flash_attention || o.cp > 1) {
    a.core = 4.0 * heads * d.tokens;  // fp32 log-sum-exp per query row
  } else {
    // softmax output (2 bytes), dropout mask (1) and dropout output (2) per score:
    // 5as^2b with dropout, 2as^2b without.
    const double scores = heads * static_cast<double>(o.micro_batch_size) *
                          static_cast<double>(o.seq_length) * static_cast<double>(o.seq_length);
    a.core = (o.dropout ? (2 * d.bpv + d.mask) : d.bpv) * scores;
  }
  a.output = d.gib * d.tokens * qw / d.t;
  return a;
}

// MLP block with inner width `ffn` split over `split` ranks on `tokens` tokens.
struct MlpParts {
  double replicated;    // LN2 input, FC1 input, dropout mask
  double gemm_outputs;  // FC1 output (gate and up for SwiGLU)
  double activation;    // activation output = FC2 input
};

MlpParts mlp_parts(const ModelSpec& m, const Dims& d, double ffn, double tokens, double split) {
  const double h = static_cast<double>(m.hidden_size);
  const double fc1_width = m.activation == Activation::Swiglu ? 2 * ffn : ffn;
  MlpParts p;
  p.replicated = (d.bpv + d.gib + d.mask) * d.tokens * h * d.rep;
  p.gemm_outputs = d.bpv * tokens * fc1_width / split;
  p.activation = d.gib * tokens * ffn / split;
  return p;
}

// The MLP half of a layer: a dense MLP, or routed experts with shared experts and the
// token dispatch buffers.
struct MlpTotals {
  double replicated = 0;  // LN2 input, FC1 input, dropout mask
  double gemm = 0;        // FC1 outputs (dense MLP or routed experts)
  double activation = 0;  // FC2 inputs
  double shared_gemm = 0;
  double shared_activation = 0;
  double dispatch = 0;  // dispatched expert inputs, combine buffer, router probabilities
  bool moe = false;
};

// Bytes Megatron's per-module recomputation (--recompute-modules) drops from what a layer
// keeps for its backward pass: each module's outputs, which it recomputes from its kept
// input (Megatron-Core transformer_layer.py / moe_layer.py CheckpointWithoutOutput and
// tensor_parallel.checkpoint).
double recomputed_module_bytes(unsigned modules, const AttentionParts& a, const MlpTotals& mlp,
                               const ActivationOptions& o, const Dims& d, const ModelSpec& m) {
  namespace rm = recompute_module;
  double bytes = 0;
  // Flash attention keeps only its statistics: nothing to drop (Table 2 "selective" without
  // flash attention drops the score tensors).
  if ((modules & rm::kCoreAttn) && !(o.flash_attention || o.cp > 1)) bytes += a.core;
  // Both norms' outputs (the QKV and FC1 inputs).
  if (modules & rm::kLayernorm)
    bytes += 2 * d.gib * d.tokens * static_cast<double>(m.hidden_size) * d.rep;
  if ((modules & rm::kMlaUpProj) && o.mla) bytes += a.gemm_outputs;
  if (!mlp.moe) {
    if (modules & rm::kMlp) bytes += mlp.gemm + mlp.activation;
    return bytes;
  }
  if (modules & rm::kMoe) {
    return bytes + mlp.gemm + mlp.activation + mlp.shared_gemm + mlp.shared_activation +
           mlp.dispatch;
  }
  if (modules & rm::kMoeAct) bytes += mlp.activation;
  if (modules & rm::kSharedExperts) bytes += mlp.shared_gemm + mlp.shared_activation;
  return bytes;
}

LayerActivationBytes combine(const AttentionParts& a, const MlpTotals& mlp,
                             const ActivationOptions& o, const Dims& d, const ModelSpec& m) {
  const double mlp_gemm = mlp.gemm + mlp.shared_gemm;
  const double mlp_activation = mlp.activation + mlp.shared_activation;
  const double everything = a.replicated + a.gemm_outputs + a.core + a.output + mlp.replicated +
                            mlp_gemm + mlp_activation + mlp.dispatch;
  const double layer_input = d.bpv * d.tokens * static_cast<double>(m.hidden_size) * d.rep;
  LayerActivationBytes out;
  switch (o.recompute) {
    case Recompute::None:
      out.stored = everything;
      break;
    case Recompute::Selective:
      if (o.recompute_modules != 0) {
        const double dropped = recomputed_module_bytes(o.recompute_modules, a, mlp, o, d, m);
        out.stored = everything - dropped;
        // The recomputed modules live again during the layer's backward.
        out.transient = dropped;
        break;
      }
      if (o.selective_keeps_half_gemm_outputs) {
        // Operator-level selective checkpointing (torchtitan "op" mode): the layer input,
        // the attention output and every other matmul output are kept; norms and
        // activation functions are recomputed.
        out.stored =
            layer_input + a.output + a.core +
            0.5 * (a.gemm_outputs + mlp_gemm + mlp_activation + mlp.dispatch + 2 * layer_input);
      } else {
        // Megatron: recompute the attention core only (Table 2, "selective").
        const double kept_core = o.flash_attention || o.cp > 1 ? a.core : 0.0;
        out.stored = everything - a.core + kept_core;
      }
      out.transient = a.core;
      break;
    case Recompute::Full:
      // Only the layer input is kept (2sbh, or 2sbh/t with sequence parallelism); the whole
      // layer lives again while it is recomputed for its backward pass.
      out.stored = layer_input;
      out.transient = everything;
      break;
  }
  return out;
}

}  // namespace

LayerActivationBytes dense_layer_activation_bytes(const ModelSpec& m, const ActivationOptions& o) {
  const Dims d = dims_of(o);
  const AttentionParts a = attention_parts(m, o, d);
  const MlpParts p = mlp_parts(m, d, static_cast<double>(m.ffn_hidden_size), d.tokens, d.t);
  MlpTotals mlp;
  mlp.replicated = p.replicated;
  mlp.gemm = p.gemm_outputs;
  mlp.activation = p.activation;
  return combine(a, mlp, o, d, m);
}

LayerActivationBytes moe_layer_activation_bytes(const ModelSpec& m, const ActivationOptions& o,
                                                int64_t ep, int64_t expert_tp) {
  const Dims d = dims_of(o);
  const AttentionParts a = attention_parts(m, o, d);
  const MoeSpec& moe = *m.moe;
  // Whatever the ep size, a GPU's experts receive on average the routed copies of the tokens
  // it and its expert-TP group dispatch (cost_models/expert_rows.h), as the step time counts.
  (void)ep;
  const double routed_tokens =
      expert_rows(d.tokens, o.tp, expert_tp, o.sequence_parallel, moe.top_k).rows;
  const MlpParts routed = mlp_parts(m, d, static_cast<double>(moe.expert_ffn_hidden_size),
                                    routed_tokens, static_cast<double>(expert_tp));
  MlpTotals mlp;
  mlp.moe = true;
  mlp.replicated = routed.replicated;
  mlp.gemm = routed.gemm_outputs;
  mlp.activation = routed.activation;
  if (moe.shared_expert_ffn_hidden_size > 0) {
    const MlpParts shared =
        mlp_parts(m, d, static_cast<double>(moe.shared_expert_ffn_hidden_size), d.tokens, d.t);
    mlp.shared_gemm = shared.gemm_outputs;
    mlp.shared_activation = shared.activation;
  }
  const double h = static_cast<double>(m.hidden_size);
  // Dispatched expert inputs (the expert FC1 input), the combine buffer (top_k weighted copies
  // of each token) where the combine keeps it, router probabilities in fp32.
  const double combine_bytes = o.moe_combine_keeps_expert_outputs ? d.bpv : 0.0;
  mlp.dispatch = (d.gib + combine_bytes) * routed_tokens * h +
                 4.0 * d.tokens * static_cast<double>(moe.num_experts);
  return combine(a, mlp, o, d, m);
}

}  // namespace parplan::cost
