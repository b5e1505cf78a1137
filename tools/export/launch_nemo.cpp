// A Megatron-Bridge (NeMo 2) recipe override: YAML of ConfigContainer fields. Names follow
// Megatron-Bridge's "Megatron-LM to Megatron Bridge Guide" (docs/megatron-lm-to-megatron-
// bridge) and the Megatron-Core dataclasses behind `model` (ModelParallelConfig,
// TransformerConfig) and `ddp` (DistributedDataParallelConfig); `peft.dim` is the LoRA rank
// (megatron/bridge/peft/lora.py); `comm_overlap` is megatron/bridge/training/comm_overlap.py.
#include <map>
#include <vector>

#include "cost_models/framework_traits.h"
#include "tools/export/launch_settings.h"

namespace parplan::tools {

namespace {

// Ordered YAML sections of "key: value" lines, with comments.
class Yaml {
 public:
  void set(const std::string& section, const std::string& key, const std::string& value) {
    lines(section).push_back("  " + key + ": " + value);
  }
  void set(const std::string& section, const std::string& key, int64_t value) {
    set(section, key, std::to_string(value));
  }
  void set_bool(const std::string& section, const std::string& key, bool value) {
    set(section, key, value ? "true" : "false");
  }
  void comment(const std::string& section, const std::string& text) {
    lines(section).push_back("  # " + text);
  }
  std::string text() const {
    std::string out;
    for (const auto& [name, body] : sections_) {
      bool only_comments = true;
      for (const auto& l : body) only_comments &= l.rfind("  #", 0) == 0;
      // A section of comments alone must not become an empty (null) YAML key.
      out += (only_comments ? "# " : "") + name + ":\n";
      for (const auto& l : body) out += l + "\n";
    }
    return out;
  }

 private:
  std::vector<std::string>& lines(const std::string& section) {
    for (auto& [name, body] : sections_) {
      if (name == section) return body;
    }
    sections_.emplace_back(section, std::vector<std::string>{});
    return sections_.back().second;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> sections_;
};

void parallelism(const Job& job, Yaml& y) {
  const ParallelPlan& p = job.plan;
  const auto traits = cost::framework_traits(job.framework, job.training, p);
  y.comment("model", "parallelism (data-parallel size " + std::to_string(p.dp) +
                         " is derived from the GPU count)");
  y.set("model", "tensor_model_parallel_size", p.tp);
  y.set("model", "pipeline_model_parallel_size", p.pp);
  if (p.vpp > 1) y.set("model", "virtual_pipeline_model_parallel_size", p.vpp);
  y.set("model", "context_parallel_size", p.cp);
  if (job.model.moe) {
    y.set("model", "expert_model_parallel_size", p.ep);
    y.set("model", "expert_tensor_parallel_size", p.expert_tp());
  }
  y.set_bool("model", "sequence_parallel", p.sequence_parallel && p.tp > 1);
  if (p.pp > 1 && p.vpp == 1 && launch::even_layers_per_chunk(job) == 0) {
    const auto chunks = layers_per_chunk(job.model, p);
    bool middle_even = true;
    for (std::size_t i = 2; i + 1 < chunks.size(); ++i) middle_even &= chunks[i] == chunks[1];
    if (middle_even && chunks.size() > 2) {
      y.set("model", "num_layers_in_first_pipeline_stage", chunks.front());
      y.set("model", "num_layers_in_last_pipeline_stage", chunks.back());
    } else {
      y.comment("model", "this split of layers over stages has no field here");
    }
  } else if (p.vpp > 1 && launch::even_layers_per_chunk(job) == 0) {
    y.comment("model", "uneven layers per model chunk: not expressible with these fields");
  }
  switch (p.schedule) {
    case ScheduleKind::OneFOneB:
    case ScheduleKind::Interleaved:
      break;
    default:
      y.comment("model", std::string("plan.schedule ") + to_string(p.schedule) +
                             ": no field selects it (1F1B, or interleaved with virtual stages)");
  }
  if (p.order == "tp-cp-ep-pp-dp") {
    y.set_bool("dist", "use_tp_pp_dp_mapping", true);
  } else if (p.order != "tp-cp-ep-dp-pp") {
    y.comment("dist", "plan.order " + p.order + ": only tp-cp-ep-dp-pp and tp-cp-ep-pp-dp exist");
  }
  const bool distributed_optimizer = p.zero_stage >= 1;
  y.set_bool("ddp", "use_distributed_optimizer", distributed_optimizer);
  y.set_bool("optimizer", "use_distributed_optimizer", distributed_optimizer);
  if (p.zero_stage >= 2) {
    y.comment("ddp", p.zero_stage == 2 ? "zero_stage 2: Megatron FSDP, optimizer and gradients"
                                       : "zero_stage 3: Megatron FSDP, fully sharded");
    y.set_bool("ddp", "use_megatron_fsdp", true);
    y.set("ddp", "data_parallel_sharding_strategy",
          p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
  }
  if (p.zero_stage == 1 && p.zero_shard_size > 0 && p.zero_shard_size < p.dp) {
    y.set("ddp", "num_distributed_optimizer_instances", p.dp / p.zero_shard_size);
  }
  y.set_bool("ddp", "overlap_grad_reduce", p.dp > 1 && traits.overlap_dp_grad_reduce);
  y.set_bool("ddp", "overlap_param_gather",
             p.dp > 1 && p.zero_stage >= 1 && traits.overlap_param_gather);
  if (p.tp > 1 && p.sequence_parallel &&
      cost::tp_comm_overlap_applies(traits, cost::place_group(p, job.cluster.node, {"tp"}))) {
    y.set_bool("comm_overlap", "tp_comm_overlap", true);
  }
}

void model_shape(const Job& job, Yaml& y) {
  const ModelSpec& m = job.model;
  y.comment("model", "shape of " + m.name + " (pins the recipe's model provider)");
  y.set("model", "num_layers", m.num_layers);
  y.set("model", "hidden_size", m.hidden_size);
  y.set("model", "ffn_hidden_size", m.ffn_hidden_size);
  y.set("model", "num_attention_heads", m.num_attention_heads);
  y.set("model", "num_query_groups", m.num_query_groups);
  if (!m.mla && m.head_dim * m.num_attention_heads != m.hidden_size) {
    y.set("model", "kv_channels", m.head_dim);
  }
  if (m.activation == Activation::Swiglu) {
    y.set_bool("model", "gated_linear_unit", true);
    y.set("model", "activation_func", "silu");
  }
  y.set("model", "normalization",
        m.normalization == Normalization::RmsNorm ? "RMSNorm" : "LayerNorm");
  if (m.position_embedding == PositionEmbedding::Alibi) {
    y.comment("model", "position embedding alibi: no Megatron-Core option");
  } else {
    y.set("model", "position_embedding_type",
          m.position_embedding == PositionEmbedding::Rotary ? "rope" : "learned_absolute");
  }
  y.set_bool("model", "share_embeddings_and_output_weights", m.tied_embeddings);
  if (launch::trains_without_dropout(m)) {
    y.set("model", "attention_dropout", "0.0");
    y.set("model", "hidden_dropout", "0.0");
  }
  y.set("model", "seq_length", job.training.seq_length);
  if (m.mla) {
    y.comment("model", "multi-latent attention: needs an MLA model provider (DeepSeek recipes)");
    if (m.mla->q_lora_rank > 0) y.set("model", "q_lora_rank", m.mla->q_lora_rank);
    y.set("model", "kv_lora_rank", m.mla->kv_lora_rank);
    y.set("model", "qk_head_dim", m.mla->qk_nope_head_dim);
    y.set("model", "qk_pos_emb_head_dim", m.mla->qk_rope_head_dim);
    y.set("model", "v_head_dim", m.mla->v_head_dim);
  }
  if (m.moe) {
    y.set("model", "num_moe_experts", m.moe->num_experts);
    y.set("model", "moe_router_topk", m.moe->top_k);
    y.set("model", "moe_ffn_hidden_size", m.moe->expert_ffn_hidden_size);
    if (m.moe->num_shared_experts > 0) {
      const int64_t shared = m.moe->shared_expert_ffn_hidden_size > 0
                                 ? m.moe->shared_expert_ffn_hidden_size
                                 : m.moe->num_shared_experts * m.moe->expert_ffn_hidden_size;
      y.set("model", "moe_shared_expert_intermediate_size", shared);
    }
    const auto pattern = launch::moe_layer_pattern(m);
    std::string list;
    bool all_moe = true;
    for (int v : pattern) {
      all_moe &= v == 1;
      list += (list.empty() ? "" : ", ") + std::to_string(v);
    }
    if (!all_moe) y.set("model", "moe_layer_freq", "[" + list + "]");
    if (job.plan.ep > 1) y.set("model", "moe_token_dispatcher_type", "alltoall");
  }
}

void training(const Job& job, Yaml& y) {
  const ParallelPlan& p = job.plan;
  const TrainingSpec& t = job.training;
  if (p.recompute == Recompute::Selective) {
    y.set("model", "recompute_granularity", "selective");
  } else if (p.recompute == Recompute::Full) {
    y.set("model", "recompute_granularity", "full");
    y.set("model", "recompute_method", "uniform");
    y.set("model", "recompute_num_layers", 1);
  }
  y.set("train", "micro_batch_size", p.micro_batch_size);
  y.set("train", "global_batch_size", t.global_batch_size);
  y.set("dataset", "seq_length", t.seq_length);
  switch (t.method) {
    case TrainingMethod::Lora:
      y.comment("peft", "training.method lora: start from a PEFT (LoRA) recipe; adapter rank:");
      y.set("peft", "dim", t.lora_rank);
      break;
    case TrainingMethod::Sft:
      y.comment("checkpoint",
                "training.method sft: start from an SFT recipe and set "
                "pretrained_checkpoint to the base model");
      break;
    case TrainingMethod::Pretrain:
      break;
  }
}

}  // namespace

std::string export_nemo(const Job& job) {
  std::string out = launch::header(
      job, "Megatron-Bridge (NeMo 2) recipe override, YAML",
      "Megatron-Bridge ConfigContainer fields (model.* are Megatron-Core TransformerConfig and "
      "ModelParallelConfig fields); '#' lines name what has no field");
  Yaml y;
  parallelism(job, y);
  model_shape(job, y);
  training(job, y);
  std::string text = out + y.text();
  switch (job.training.precision) {
    case Precision::Fp32:
      text += "# mixed_precision: none (fp32 training; leave the recipe's mixed_precision unset)\n";
      break;
    case Precision::Fp16:
      text += "mixed_precision: fp16_mixed\n";
      break;
    case Precision::Bf16:
      text += "mixed_precision: bf16_mixed\n";
      break;
    case Precision::Fp8:
      // Per-tensor delayed scaling with fp8 parameters on Hopper, MXFP8 on Blackwell (the
      // memory model's fp8 layout, core/frameworks/cost_traits.h fp8_params).
      text += cost::fp8_recipe_is_mxfp8(job.cluster.node.gpu)
                  ? "mixed_precision: bf16_with_mxfp8_mixed\n"
                  : "mixed_precision: bf16_with_fp8_delayed_scaling_mixed\n";
      break;
  }
  return text;
}

}  // namespace parplan::tools
