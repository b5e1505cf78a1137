// A Megatron-Bridge ConfigContainer override, YAML, for NVIDIA-NeMo/Megatron-Bridge at commit
// 067f987d (not the NeMo 2.x `nemo.collections.llm` form with trainer.strategy.*). Bridge merges
// it into a recipe with OmegaConf (training/utils/omegaconf_utils.py
// process_config_with_overrides, the examples' --config-file) and then sets each field on the
// recipe's dataclasses: a section the recipe leaves None (recipes/common.py: comm_overlap) must
// name its class with `_target_`, or .finalize() meets a plain dict. Names follow the
// "Megatron-LM to Megatron Bridge Guide" and the Megatron-Core dataclasses behind `model`
// (ModelParallelConfig, TransformerConfig, GPTModelProvider) and `ddp`; `peft.dim` is the LoRA
// rank. Tested in tests/tools/export_test.cpp and nemo_rules_test.cpp.
#include <cmath>
#include <map>
#include <vector>

#include "cost_models/framework_traits.h"
#include "cost_models/moe_dispatch.h"
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
  // A top-level "key: value" line (after the sections), or a top-level comment.
  void top(const std::string& key, const std::string& value) { top_ += key + ": " + value + "\n"; }
  void top_comment(const std::string& text) { top_ += "# " + text + "\n"; }
  std::string text() const {
    std::string out;
    for (const auto& [name, body] : sections_) {
      bool only_comments = true;
      for (const auto& l : body) only_comments &= l.rfind("  #", 0) == 0;
      // A section of comments alone must not become an empty (null) YAML key.
      out += (only_comments ? "# " : "") + name + ":\n";
      for (const auto& l : body) out += l + "\n";
    }
    return out + top_;
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
  std::string top_;
};

// Layers over stages and chunks. Every split field is written, null where unused, so that a
// recipe's own split (Bridge's Llama 3 70B sets virtual stages, DeepSeek recipes a layout)
// cannot survive the override: TransformerConfig rejects a layout beside first/last-stage
// counts or account_for_* (transformer_config.py __post_init__).
void pipeline_split(const Job& job, Yaml& y) {
  const ParallelPlan& p = job.plan;
  std::string first = "null", last = "null", layout = "null";
  if (p.pp > 1 && launch::even_layers_per_chunk(job) == 0) {
    // Uneven splits: first/last-stage counts where they say it, else the explicit layout
    // (megatron/core/transformer/pipeline_parallel_layer_layout.py), as Megatron-LM's export.
    if (const auto counts = launch::first_last_stage_layers(job)) {
      first = std::to_string(counts->first);
      last = std::to_string(counts->second);
    } else {
      layout = "\"" + launch::megatron_pipeline_layout(layers_per_chunk(job.model, p)) + "\"";
    }
  }
  y.set("model", "virtual_pipeline_model_parallel_size",
        p.vpp > 1 ? std::to_string(p.vpp) : std::string("null"));
  y.set("model", "num_layers_in_first_pipeline_stage", first);
  y.set("model", "num_layers_in_last_pipeline_stage", last);
  y.set("model", "pipeline_model_parallel_layout", layout);
  y.set_bool("model", "account_for_embedding_in_pipeline_split", false);
  y.set_bool("model", "account_for_loss_in_pipeline_split", false);
}

// comm_overlap (training/comm_overlap.py CommOverlapConfig), built once: tensor-parallel
// overlap, and for MoE models the batch-level all-to-all overlap written either way, since
// CommOverlapConfig.setup sets the model's overlap_moe_expert_parallel_comm and
// delay_wgrad_compute from it (False unless given) and a recipe's True must not survive. Recipes
// may leave comm_overlap None: the override then builds the CommOverlapConfig, whose
// tp_comm_overlap has no default.
void comm_overlap(const Job& job, Yaml& y) {
  const ParallelPlan& p = job.plan;
  const auto traits = cost::framework_traits(job.framework, job.training, p);
  const bool tp_overlap =
      p.tp > 1 && p.sequence_parallel &&
      cost::tp_comm_overlap_applies(traits, cost::place_group(p, job.cluster.node, {"tp"}));
  if (!tp_overlap && !job.model.moe) return;
  y.set("comm_overlap", "_target_", "megatron.bridge.training.comm_overlap.CommOverlapConfig");
  y.set_bool("comm_overlap", "tp_comm_overlap", tp_overlap);
  if (!job.model.moe) return;
  y.set_bool("comm_overlap", "overlap_moe_expert_parallel_comm", p.moe_a2a_overlap);
  y.set_bool("comm_overlap", "delay_wgrad_compute", p.moe_a2a_overlap);
  if (!p.moe_a2a_overlap) return;
  // The overlap needs more than one hardware queue (Megatron-Core MoE README, "Requirements
  // for EP A2A Overlap"); ConfigContainer.env_vars sets it unless the shell already does
  // (config.py apply_environment_variables), as Bridge's Qwen3 and DeepSeek-V3 perf recipes.
  y.comment("env_vars", "the MoE overlap needs it above 1; a value exported in the shell wins");
  y.set("env_vars", "CUDA_DEVICE_MAX_CONNECTIONS", 32);
  // transformer_config.py / comm_overlap.py: the overlap refuses a recipe's shared-expert
  // overlap (and a recompute method or layer count: training() clears them).
  y.set_bool("model", "moe_shared_expert_overlap", false);
}

void parallelism(const Job& job, Yaml& y) {
  const ParallelPlan& p = job.plan;
  const auto traits = cost::framework_traits(job.framework, job.training, p);
  y.comment("model", "parallelism (data-parallel size " + std::to_string(p.dp) +
                         " is derived from the GPU count)");
  y.set("model", "tensor_model_parallel_size", p.tp);
  y.set("model", "pipeline_model_parallel_size", p.pp);
  y.set("model", "context_parallel_size", p.cp);
  if (job.model.moe) {
    y.set("model", "expert_model_parallel_size", p.ep);
    y.set("model", "expert_tensor_parallel_size", p.expert_tp());
  }
  y.set_bool("model", "sequence_parallel", p.sequence_parallel && p.tp > 1);
  pipeline_split(job, y);
  // Schedules and rank orders Megatron-Core lacks are refused (nemo_refusal).
  if (p.order == "tp-cp-ep-pp-dp") y.set_bool("dist", "use_tp_pp_dp_mapping", true);
  const bool distributed_optimizer = p.zero_stage >= 1;
  y.set_bool("ddp", "use_distributed_optimizer", distributed_optimizer);
  y.set_bool("optimizer", "use_distributed_optimizer", distributed_optimizer);
  if (p.zero_stage >= 2) {
    y.comment("ddp", p.zero_stage == 2 ? "zero_stage 2: Megatron FSDP, optimizer and gradients"
                                       : "zero_stage 3: Megatron FSDP, fully sharded");
    y.set_bool("ddp", "use_megatron_fsdp", true);
    y.set("ddp", "data_parallel_sharding_strategy",
          p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    // config.py: "Megatron-FSDP requires the fsdp_dtensor checkpointing format!"
    y.set("checkpoint", "ckpt_format", "fsdp_dtensor");
  } else {
    y.set("checkpoint", "ckpt_format", "torch_dist");
  }
  if (p.zero_stage == 1 && p.zero_shard_size > 0 && p.zero_shard_size < p.dp) {
    y.set("ddp", "num_distributed_optimizer_instances", p.dp / p.zero_shard_size);
  }
  y.set_bool("ddp", "overlap_grad_reduce", p.dp > 1 && traits.overlap_dp_grad_reduce);
  y.set_bool("ddp", "overlap_param_gather",
             p.dp > 1 && p.zero_stage >= 1 && traits.overlap_param_gather);
  comm_overlap(job, y);
}

void model_shape(const Job& job, Yaml& y) {
  const ModelSpec& m = job.model;
  y.comment("model", "shape of " + m.name + " (pins the recipe's model provider)");
  y.set("model", "num_layers", m.num_layers);
  y.set("model", "hidden_size", m.hidden_size);
  y.set("model", "ffn_hidden_size", m.ffn_hidden_size);
  y.set("model", "num_attention_heads", m.num_attention_heads);
  y.set("model", "num_query_groups", m.num_query_groups);
  // Fields a recipe may set for its own model are written even at their defaults.
  if (!m.mla) y.set("model", "kv_channels", m.head_dim);
  if (m.activation == Activation::Swiglu) {
    y.set_bool("model", "gated_linear_unit", true);
    y.set("model", "activation_func", "silu");
  }
  y.set("model", "normalization",
        m.normalization == Normalization::RmsNorm ? "RMSNorm" : "LayerNorm");
  // ALiBi is refused (nemo_refusal).
  y.set("model", "position_embedding_type",
        m.position_embedding == PositionEmbedding::Rotary ? "rope" : "learned_absolute");
  if (m.position_embedding == PositionEmbedding::Rotary) {
    y.set("model", "rotary_base", static_cast<int64_t>(std::llround(m.rotary_base)));
    y.set_bool("model", "rope_scaling", m.rope_scaling_factor > 0);
    if (m.rope_scaling_factor > 0) {
      y.set("model", "rope_scaling_factor", launch::number_text(m.rope_scaling_factor));
    }
  }
  // TransformerConfig adds biases to every linear layer unless told not to.
  y.set_bool("model", "add_bias_linear", m.linear_bias);
  y.set_bool("model", "add_qkv_bias", m.linear_bias || m.qkv_bias);
  y.set_bool("model", "qk_layernorm", m.qk_norm);
  y.set("model", "make_vocab_size_divisible_by", launch::vocab_divisor(m.vocab_size, job.plan.tp));
  y.set_bool("model", "share_embeddings_and_output_weights", m.tied_embeddings);
  if (launch::trains_without_dropout(m)) {
    y.set("model", "attention_dropout", "0.0");
    y.set("model", "hidden_dropout", "0.0");
  }
  y.set("model", "seq_length", job.training.seq_length);
  if (m.mla) {
    y.comment("model", "multi-latent attention: needs an MLA model provider (DeepSeek recipes)");
    y.set("model", "q_lora_rank",
          m.mla->q_lora_rank > 0 ? std::to_string(m.mla->q_lora_rank) : std::string("null"));
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
    } else {
      y.set("model", "moe_shared_expert_intermediate_size", "null");
    }
    const auto pattern = launch::moe_layer_pattern(m);
    std::string list;
    bool all_moe = true;
    for (int v : pattern) {
      all_moe &= v == 1;
      list += (list.empty() ? "" : ", ") + std::to_string(v);
    }
    y.set("model", "moe_layer_freq", all_moe ? "1" : "[" + list + "]");
    if (job.plan.ep > 1) {
      // The dispatcher the time model assumed (cost::resolved_moe_dispatcher), both fields written:
      // Bridge's validate_flex_dispatcher_backend falls back to alltoall on a null backend.
      const MoeDispatcher dispatcher = cost::resolved_moe_dispatcher(job);
      const bool flex = is_flex_dispatcher(dispatcher);
      y.set("model", "moe_token_dispatcher_type", flex ? "flex" : "alltoall");
      y.set("model", "moe_flex_dispatcher_backend", flex ? to_string(dispatcher) : "null");
    }
    y.set_bool("model", "moe_grouped_gemm", true);  // the time model assumes grouped GEMMs
  }
}

void training(const Job& job, Yaml& y) {
  const ParallelPlan& p = job.plan;
  const TrainingSpec& t = job.training;
  // A recipe's recompute method and layer count are cleared without full recomputation:
  // TransformerConfig refuses a layer count with "selective", and the MoE overlap either one.
  if (p.recompute != Recompute::Full) {
    y.set("model", "recompute_method", "null");
    y.set("model", "recompute_num_layers", "null");
  }
  if (p.recompute == Recompute::None) {
    y.set("model", "recompute_granularity", "null");  // not the recipe's
  } else if (p.recompute == Recompute::Selective) {
    y.set("model", "recompute_granularity", "selective");
    y.set("model", "recompute_modules",
          p.recompute_modules != 0 ? "[" + launch::recompute_module_list(p, ", ") + "]" : "null");
  } else if (p.recompute == Recompute::Full) {
    y.set("model", "recompute_granularity", "full");
    y.set("model", "recompute_method", "uniform");
    y.set("model", "recompute_num_layers", 1);
  }
  // Activation offloading (TransformerConfig cpu_offloading*), written either way so that a
  // recipe's own setting does not survive.
  y.set_bool("model", "cpu_offloading", p.offload_activation_layers > 0);
  y.set("model", "cpu_offloading_num_layers", p.offload_activation_layers);
  y.set_bool("model", "cpu_offloading_weights", false);
  y.set("train", "micro_batch_size", p.micro_batch_size);
  y.set("train", "global_batch_size", t.global_batch_size);
  y.set("dataset", "seq_length", t.seq_length);
  y.comment("train", "replace every <...> placeholder (paths and run length only you know)");
  y.set("train", "train_iters", "<TRAIN_ITERS>");
  y.set("tokenizer", "tokenizer_type", "HuggingFaceTokenizer");
  y.set("tokenizer", "tokenizer_model", "<TOKENIZER_NAME_OR_PATH>");
  y.set("checkpoint", "save", "<CHECKPOINT_DIR>");
  y.set("checkpoint", "load", "<CHECKPOINT_DIR>");
  switch (t.method) {
    case TrainingMethod::Lora:
      y.comment("peft", "training.method lora: start from a PEFT (LoRA) recipe; adapter rank:");
      y.set("peft", "dim", t.lora_rank);
      break;
    case TrainingMethod::Sft:
      y.comment("checkpoint", "training.method sft: start from an SFT recipe; the base model:");
      y.set("checkpoint", "pretrained_checkpoint", "<PRETRAINED_CHECKPOINT_DIR>");
      break;
    case TrainingMethod::Pretrain:
      break;
  }
}

}  // namespace

std::optional<ExportRefusal> nemo_refusal(const Job& job) {
  return launch::megatron_core_refusal(job);
}

namespace {

// `mixed_precision`: a preset name for 16-bit training; for fp8 the MixedPrecisionConfig
// itself, so that the recipe, format and parameter gather are launch::fp8_launch's, as in
// the Megatron-LM flags (a preset would fix the parameter gather whatever the plan's ZeRO stage).
void mixed_precision(const Job& job, Yaml& y) {
  switch (job.training.precision) {
    case Precision::Fp32:
      y.top("mixed_precision", "null");  // fp32 training, not the recipe's preset
      return;
    case Precision::Fp16:
      y.top("mixed_precision", "fp16_mixed");
      return;
    case Precision::Bf16:
      y.top("mixed_precision", "bf16_mixed");
      return;
    case Precision::Fp8:
      break;
  }
  const launch::Fp8Launch fp8 = launch::fp8_launch(job);
  const std::string bf16 = "{_target_: torch.bfloat16, _call_: false}";
  y.set("mixed_precision", "_target_",
        "megatron.bridge.training.mixed_precision.MixedPrecisionConfig");
  y.set_bool("mixed_precision", "bf16", true);
  y.set("mixed_precision", "params_dtype", bf16);
  y.set("mixed_precision", "pipeline_dtype", bf16);
  y.set_bool("mixed_precision", "autocast_enabled", false);
  y.set_bool("mixed_precision", "grad_reduce_in_fp32", true);
  y.set("mixed_precision", "fp8", fp8.format);
  y.set("mixed_precision", "fp8_recipe", fp8.recipe);
  y.set_bool("mixed_precision", "fp8_param_gather", fp8.param_gather);
  // Bridge asserts this whenever MXFP8 parameters are gathered without Megatron-FSDP, and
  // turns it off itself under Megatron-FSDP (config.py at 067f987d; before v0.5.0 it asserted
  // it under FSDP too): set with every MXFP8 parameter gather.
  y.set_bool("mixed_precision", "reuse_grad_buf_for_mxfp8_param_ag",
             fp8.param_gather && cost::fp8_recipe_is_mxfp8(job.cluster.node.gpu));
}

}  // namespace

std::string export_nemo(const Job& job) {
  std::string out = launch::header(
      job, "Megatron-Bridge ConfigContainer override (YAML, NVIDIA-NeMo/Megatron-Bridge 067f987d)",
      "Megatron-Bridge ConfigContainer fields (model.* are Megatron-Core TransformerConfig, "
      "ModelParallelConfig and GPTModelProvider fields); '#' lines are notes");
  out +=
      "# merge into a recipe: --config-file FILE of Bridge's training scripts "
      "(training/utils/omegaconf_utils.py process_config_with_overrides); this is not the "
      "NeMo 2.x nemo.collections.llm form (trainer.strategy.*)\n";
  Yaml y;
  parallelism(job, y);
  model_shape(job, y);
  training(job, y);
  mixed_precision(job, y);
  return out + y.text();
}

}  // namespace parplan::tools
