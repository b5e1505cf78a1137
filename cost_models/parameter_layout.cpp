#include "cost_models/parameter_layout.h"

#include <algorithm>

#include "cost_models/lora.h"

namespace parplan::cost {

std::vector<StageParameters> stage_parameters(const Job& job) {
  return stage_parameters(job, framework_traits(job.framework, job.training, job.plan));
}

std::vector<StageParameters> stage_parameters(const Job& job, const FrameworkTraits& traits) {
  const ModelSpec& m = job.model;
  const ParallelPlan& p = job.plan;
  const double t = static_cast<double>(p.tp);
  const double etp = static_cast<double>(p.expert_tp());
  const double h = static_cast<double>(m.hidden_size);
  const auto chunk_layers = layers_per_chunk(m, p);

  // Per-GPU parameters of one layer.
  const double norms = static_cast<double>(m.norm_params_per_layer());
  const double attention = static_cast<double>(m.attention_params()) / t;
  const double dense_mlp = static_cast<double>(m.dense_mlp_params()) / t;
  double moe_dense = 0;   // router + shared experts (replicated over dp)
  double moe_expert = 0;  // routed experts held by this GPU
  if (m.moe) {
    moe_dense = h * static_cast<double>(m.moe->num_experts) +
                static_cast<double>(m.mlp_matrices()) * h *
                    static_cast<double>(m.moe->shared_expert_ffn_hidden_size) / t;
    moe_expert = static_cast<double>(m.moe->num_experts / p.ep) *
                 static_cast<double>(m.routed_expert_params()) / etp;
  }

  const int64_t dense_group = traits.cp_shards_optimizer ? p.dp * p.cp : p.dp;
  const int64_t shard = p.zero_shard_size > 0 ? p.zero_shard_size : dense_group;
  const int64_t expert_dp = std::max<int64_t>(1, (p.dp * p.cp * p.tp) / (p.ep * p.expert_tp()));
  // Hybrid sharding keeps dense_group / shard replicas of the ZeRO state; the experts'
  // expert-dp ranks split into as many replicas, each sharding over the rest (Megatron-Core's
  // partial expert-data-parallel group; torchtitan's expert FSDP mesh beside dp_replicate).
  const int64_t expert_shard =
      p.zero_shard_size > 0 ? std::max<int64_t>(1, expert_dp * shard / dense_group) : expert_dp;

  // One pass over the model chunks in layer order: chunk c runs on stage c % pp, so each
  // stage's sums add its layers in increasing order.
  std::vector<StageParameters> out(static_cast<std::size_t>(p.pp));
  int64_t first_layer = 0;
  // A layer holds one of two parameter sets, dense or MoE; a chunk's sums count its layers
  // of each kind (the planner calls this for every plan it screens).
  const bool lora = job.training.method == TrainingMethod::Lora;
  struct LayerKind {
    double dense, expert, adapter, gathered;
  };
  auto kind = [&](bool is_moe) {
    const double dense = attention + norms + (is_moe ? moe_dense : dense_mlp);
    const double expert = is_moe ? moe_expert : 0.0;
    return LayerKind{dense, expert,
                     lora ? lora_layer_params(m, is_moe, job.training.lora_rank, p.tp) : 0.0,
                     (shard > 1 ? dense : 0.0) + (expert_shard > 1 ? expert : 0.0)};
  };
  const LayerKind dense_layer = kind(false);
  const LayerKind moe_layer = kind(true);
  for (int64_t chunk = 0; chunk < p.pp * p.vpp; ++chunk) {
    const int64_t n = chunk_layers[chunk];
    StageParameters& sp = out[static_cast<std::size_t>(chunk % p.pp)];
    const int64_t moe = m.moe_layers_in(first_layer, n);
    const auto add = [&sp](const LayerKind& k, int64_t count) {
      if (count == 0) return;
      const double c = static_cast<double>(count);
      sp.dense_params += c * k.dense;
      sp.expert_params += c * k.expert;
      sp.adapter_params += c * k.adapter;
      sp.largest_layer_params = std::max(sp.largest_layer_params, k.gathered);
    };
    add(dense_layer, n - moe);
    add(moe_layer, moe);
    sp.num_layers += n;
    sp.num_moe_layers += moe;
    first_layer += n;
  }
  for (int64_t s = 0; s < p.pp; ++s) {
    StageParameters& sp = out[static_cast<std::size_t>(s)];
    sp.stage = s;
    if (s == 0) {
      sp.embedding_params += static_cast<double>(m.embedding_params(job.training.seq_length)) / t;
    }
    if (s == p.pp - 1) {
      const bool separate_output = !m.tied_embeddings || p.pp > 1;
      if (separate_output) sp.embedding_params += static_cast<double>(m.vocab_size) * h / t;
      sp.dense_params += m.normalization == Normalization::LayerNorm ? 2 * h : h;
    }
    sp.dense_params += sp.embedding_params;
    sp.dense_shard_group = shard;
    sp.expert_shard_group = expert_shard;
  }
  return out;
}

ShardedBytes sharded_state_bytes(const StageParameters& sp, const ParallelPlan& plan,
                                 const FrameworkTraits& traits, const TrainingSpec& training) {
  const double dense_shard = static_cast<double>(sp.dense_shard_group);
  const double expert_shard = static_cast<double>(sp.expert_shard_group);
  auto sharded = [&](double bytes_per_param, bool shard) {
    if (!shard) return (sp.dense_params + sp.expert_params) * bytes_per_param;
    return sp.dense_params * bytes_per_param / dense_shard +
           sp.expert_params * bytes_per_param / expert_shard;
  };
  ShardedBytes out;
  if (training.method == TrainingMethod::Lora) {
    // Frozen base in 16-bit (no gradients, no optimizer state); adapters trained in full
    // mixed precision, sharded like any parameter (adapters shard over the dense group).
    const double base_bytes = activation_bytes(training.precision);
    const double adapters = sp.adapter_params;
    auto adapter_bytes = [&](double per_param, bool shard) {
      return adapters * per_param / (shard ? dense_shard : 1.0);
    };
    out.weights = sharded(base_bytes, plan.zero_stage >= 3) +
                  adapter_bytes(traits.weight_bytes, plan.zero_stage >= 3);
    out.gradients = adapter_bytes(traits.grad_bytes, plan.zero_stage >= 2);
    out.optimizer = adapter_bytes(traits.optimizer_bytes, plan.zero_stage >= 1);
  } else {
    out.optimizer = sharded(traits.optimizer_bytes, plan.zero_stage >= 1);
    out.gradients = sharded(traits.grad_bytes, plan.zero_stage >= 2) +
                    sharded(traits.low_precision_grad_copy_bytes, false);
    out.weights = sharded(traits.weight_bytes, plan.zero_stage >= 3);
  }
  // fp8 copies beside the 16-bit weights, unless the parameters themselves are fp8: then the
  // fp8 data the GEMMs read (1 + 1 bytes) takes the place of the 16-bit weight.
  if (plan.zero_stage < 3 && !fp8_params_kept(traits, plan))
    out.weights += (sp.dense_params + sp.expert_params) * traits.fp8_weight_copy_bytes;
  if (plan.schedule == ScheduleKind::DualPipe) {
    // DualPipe feeds micro-batches from both ends: every device holds two stages' parameters
    // (DeepSeek-V3 report, Table 2: 2x parameters).
    out.weights *= 2;
    out.gradients *= 2;
    out.optimizer *= 2;
  }
  if (plan.zero_stage >= 3) {
    const double compute_bytes = activation_bytes(training.precision);
    if (traits.fsdp_unsharded_with_pp && plan.pp > 1) {
      // The whole stage stays gathered in 16-bit with unsharded fp32 gradients for the step.
      out.transient = (sp.dense_params + sp.expert_params) * (compute_bytes + traits.grad_bytes);
    } else {
      // FSDP keeps the current layer and the prefetched next one gathered in 16-bit, and one
      // layer's unsharded gradients before the reduce-scatter.
      out.transient = sp.largest_layer_params * (2 * compute_bytes + traits.grad_reduce_bytes);
    }
  }
  return out;
}

}  // namespace parplan::cost
