// Megatron-LM command-line flags (pretrain_gpt.py) as a bash array with its environment and
// torchrun line. Flag names and the argument checks the plan must pass follow NVIDIA/Megatron-LM
// megatron/training/arguments.py and the config dataclasses it turns into flags (checked at
// commit d98e8a64dd); tests/tools/megatron_rules_test.cpp holds those checks.
#include <cstdio>

#include "cost_models/framework_traits.h"
#include "cost_models/moe_dispatch.h"
#include "tools/export/launch_settings.h"

namespace parplan::tools {

namespace {

// arguments.py: with tp or cp > 1 before Blackwell Megatron asserts CUDA_DEVICE_MAX_CONNECTIONS
// is 1 (kernels reach the GPU in issue order, so communication overlaps compute); Megatron
// FSDP asserts the opposite. The batch-level MoE overlap needs it above 1 (Megatron-Core MoE
// README, "Requirements for EP A2A Overlap"): with it arguments.py skips the tp/cp assert and
// only warns, and Megatron-Bridge's Qwen3 and DeepSeek-V3 performance recipes set 32.
std::string connections_line(const Job& job) {
  const ParallelPlan& p = job.plan;
  if (p.moe_a2a_overlap) {
    return "export CUDA_DEVICE_MAX_CONNECTIONS=32  # --overlap-moe-expert-parallel-comm needs it "
           "above 1; arguments.py then skips the tp/cp check (Megatron-Bridge perf recipes: 32)\n";
  }
  if (p.zero_stage >= 2) {
    return "unset CUDA_DEVICE_MAX_CONNECTIONS  # Megatron FSDP requires it unset or above 1\n";
  }
  if ((p.tp > 1 || p.cp > 1) && job.cluster.node.gpu.architecture != "blackwell") {
    return "export CUDA_DEVICE_MAX_CONNECTIONS=1  # Megatron requires it with tp or cp > 1 "
           "before Blackwell\n";
  }
  return "";
}

class Args {
 public:
  void flag(const std::string& name) { text_ += "  " + name + "\n"; }
  void value(const std::string& name, const std::string& v) {
    text_ += "  " + name + " " + v + "\n";
  }
  void value(const std::string& name, int64_t v) { value(name, std::to_string(v)); }
  void comment(const std::string& line) { text_ += "  # " + line + "\n"; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

bool uses_megatron_fsdp(const ParallelPlan& p) { return p.zero_stage >= 2; }

// Layers over pipeline stages and model chunks: Megatron's even split, first/last-stage
// counts, or the explicit layout (megatron/core/transformer/pipeline_parallel_layer_layout.py).
void pipeline_split(const Job& job, Args& a) {
  const ParallelPlan& p = job.plan;
  const int64_t per_chunk = launch::even_layers_per_chunk(job);
  if (per_chunk > 0) {
    if (p.vpp > 1) a.value("--num-layers-per-virtual-pipeline-stage", per_chunk);
    return;
  }
  // A stage holding only the embedding or the output layer needs the layout.
  if (const auto counts = launch::first_last_stage_layers(job)) {
    a.value("--decoder-first-pipeline-num-layers", counts->first);
    a.value("--decoder-last-pipeline-num-layers", counts->second);
    return;
  }
  a.value("--pipeline-model-parallel-layout",
          "\"" + launch::megatron_pipeline_layout(layers_per_chunk(job.model, p)) + "\"");
}

void parallelism(const Job& job, Args& a);

}  // namespace

std::optional<ExportRefusal> launch::megatron_core_refusal(const Job& job) {
  const ParallelPlan& p = job.plan;
  auto refuse = [&](std::string key, std::string found, std::string supported,
                    std::optional<ParallelPlan> nearest, std::string change) {
    return ExportRefusal{std::move(key), std::move(found), std::move(supported), std::move(nearest),
                         std::move(change)};
  };
  // megatron/core/pipeline_parallel/schedules.py: 1F1B, or interleaved 1F1B with virtual
  // stages; no GPipe, zero-bubble or DualPipe schedule.
  if (p.pp > 1 && p.schedule != ScheduleKind::OneFOneB && p.schedule != ScheduleKind::Interleaved) {
    const ParallelPlan nearest = launch::with_1f1b_schedule(p);
    return refuse(
        "plan.schedule", to_string(p.schedule),
        "1f1b, or interleaved with vpp > 1 (megatron/core/pipeline_parallel/schedules.py)", nearest,
        std::string("plan.schedule ") + to_string(nearest.schedule));
  }
  // megatron/core/parallel_state.py orders ranks tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with
  // --use-tp-pp-dp-mapping.
  if (p.order != "tp-cp-ep-dp-pp" && p.order != "tp-cp-ep-pp-dp") {
    ParallelPlan nearest = p;
    nearest.order = "tp-cp-ep-dp-pp";
    return refuse("plan.order", p.order, "tp-cp-ep-dp-pp (default) or tp-cp-ep-pp-dp", nearest,
                  "plan.order tp-cp-ep-dp-pp");
  }
  if (uses_megatron_fsdp(p) && p.zero_shard_size > 0 && p.zero_shard_size < p.dp) {
    ParallelPlan nearest = p;
    nearest.zero_shard_size = 0;
    return refuse("plan.zero_shard_size", std::to_string(p.zero_shard_size),
                  "Megatron FSDP sharding over the whole data-parallel group (its hybrid "
                  "sharding has options parplan does not model)",
                  nearest, "plan.zero_shard_size 0 (shard over dp " + std::to_string(p.dp) + ")");
  }
  // transformer_config.py: "overlap_moe_expert_parallel_comm is only supported with bf16 or
  // fp16 model" (fp8 trains a bf16 model).
  if (p.moe_a2a_overlap && job.training.precision == Precision::Fp32) {
    ParallelPlan nearest = p;
    nearest.moe_a2a_overlap = false;
    return refuse("plan.moe_a2a_overlap", "true with precision fp32",
                  "false with fp32 (the overlap needs a bf16 or fp16 model)", nearest,
                  "plan.moe_a2a_overlap false");
  }
  if (job.model.position_embedding == PositionEmbedding::Alibi) {
    return refuse("model.position_embedding", "alibi",
                  "learned_absolute, rope, mrope, relative or none (--position-embedding-type)",
                  std::nullopt, "");
  }
  return std::nullopt;
}

std::optional<ExportRefusal> megatron_refusal(const Job& job) {
  if (auto refusal = launch::megatron_core_refusal(job)) return refusal;
  if (job.training.method == TrainingMethod::Lora) {
    return ExportRefusal{"training.method", "lora",
                         "pretrain or sft (Megatron-LM has no LoRA arguments; --format nemo writes "
                         "Megatron-Bridge PEFT)",
                         std::nullopt, ""};
  }
  return std::nullopt;
}

namespace {

void parallelism(const Job& job, Args& a) {
  const ParallelPlan& p = job.plan;
  const auto traits = cost::framework_traits(job.framework, job.training, p);
  a.comment("parallelism (data-parallel size " + std::to_string(p.dp) +
            " = world size / (tp*pp*cp), derived by Megatron)");
  a.value("--tensor-model-parallel-size", p.tp);
  a.value("--pipeline-model-parallel-size", p.pp);
  if (p.pp > 1) pipeline_split(job, a);
  if (p.cp > 1) a.value("--context-parallel-size", p.cp);
  if (p.ep > 1) a.value("--expert-model-parallel-size", p.ep);
  if (job.model.moe && p.expert_tp() != p.tp) {
    a.value("--expert-tensor-parallel-size", p.expert_tp());
  }
  if (p.sequence_parallel && p.tp > 1) a.flag("--sequence-parallel");
  if (p.order == "tp-cp-ep-pp-dp") a.flag("--use-tp-pp-dp-mapping");
  if (p.zero_stage == 1) {
    a.flag("--use-distributed-optimizer");
    if (p.zero_shard_size > 0 && p.zero_shard_size < p.dp) {
      a.value("--num-distributed-optimizer-instances", p.dp / p.zero_shard_size);
    }
  } else if (uses_megatron_fsdp(p)) {
    a.comment(p.zero_stage == 2 ? "zero_stage 2: Megatron FSDP sharding optimizer state and "
                                  "gradients"
                                : "zero_stage 3: Megatron FSDP sharding optimizer state, "
                                  "gradients and parameters");
    a.flag("--use-megatron-fsdp");
    a.value("--data-parallel-sharding-strategy",
            p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    a.flag("--use-distributed-optimizer");
    a.flag("--no-gradient-accumulation-fusion");
    a.value("--ckpt-format", "fsdp_dtensor");  // arguments.py: Megatron-FSDP requires it
  }
  if (p.dp > 1 && traits.overlap_dp_grad_reduce) a.flag("--overlap-grad-reduce");
  if (p.dp > 1 && p.zero_stage >= 1 && traits.overlap_param_gather) {
    a.flag("--overlap-param-gather");
  }
  // Tensor-parallel overlap (Transformer Engine userbuffers) needs sequence parallelism and a
  // TP group inside one NVLink domain.
  if (p.tp > 1 && p.sequence_parallel &&
      cost::tp_comm_overlap_applies(traits, cost::place_group(p, job.cluster.node, {"tp"}))) {
    a.flag("--tp-comm-overlap");
  }
}

void batch_and_precision(const Job& job, Args& a) {
  const ParallelPlan& p = job.plan;
  const TrainingSpec& t = job.training;
  a.comment("batch and sequence");
  a.value("--micro-batch-size", p.micro_batch_size);
  a.value("--global-batch-size", t.global_batch_size);
  a.value("--seq-length", t.seq_length);
  a.value("--max-position-embeddings", t.seq_length);
  a.comment("precision and recomputation");
  switch (t.precision) {
    case Precision::Fp32:
      a.comment("precision fp32: Megatron's default (neither --bf16 nor --fp16)");
      break;
    case Precision::Fp16:
      a.flag("--fp16");
      break;
    case Precision::Bf16:
      a.flag("--bf16");
      break;
    case Precision::Fp8: {
      // The fp8 recipe all formats share (launch::fp8_launch).
      const launch::Fp8Launch fp8 = launch::fp8_launch(job);
      a.flag("--bf16");
      a.value("--fp8-format", fp8.format);
      a.value("--fp8-recipe", fp8.recipe);
      if (fp8.param_gather) a.flag("--fp8-param-gather");
      if (fp8.reuse_grad_buf_for_param_gather) a.flag("--reuse-grad-buf-for-mxfp8-param-ag");
      break;
    }
  }
  if (p.recompute == Recompute::Selective) {
    a.value("--recompute-granularity", "selective");
    // The modules the plan recomputes (Megatron-Core TransformerConfig.recompute_modules;
    // unset: Megatron's default, the attention core).
    if (p.recompute_modules != 0)
      a.value("--recompute-modules", launch::recompute_module_list(p, " "));
  } else if (p.recompute == Recompute::Full) {
    a.value("--recompute-granularity", "full");
    a.value("--recompute-method", "uniform");
    a.value("--recompute-num-layers", 1);
  }
  // Activations of the first layers to host memory (TransformerConfig.cpu_offloading_num_layers;
  // arguments.py turns cpu_offloading on with it).
  if (p.offload_activation_layers > 0) {
    a.value("--cpu-offloading-num-layers", p.offload_activation_layers);
  }
}

// The dispatcher the time model assumed (cost::resolved_moe_dispatcher): the NCCL all-to-all, or
// the flex dispatcher with DeepEP or HybridEP (transformer_config.py moe_token_dispatcher_type,
// moe_flex_dispatcher_backend); and the batch-level overlap of the expert-parallel all-to-alls
// (model_parallel_config.py overlap_moe_expert_parallel_comm, delay_wgrad_compute; the MoE
// README's "EP A2A Overlap" flags).
void moe_dispatch(const Job& job, Args& a) {
  switch (cost::resolved_moe_dispatcher(job)) {
    case MoeDispatcher::DeepEP:
      a.value("--moe-token-dispatcher-type", "flex");
      a.value("--moe-flex-dispatcher-backend", "deepep");
      break;
    case MoeDispatcher::HybridEP:
      a.value("--moe-token-dispatcher-type", "flex");
      a.value("--moe-flex-dispatcher-backend", "hybridep");
      break;
    case MoeDispatcher::AllToAll:
    case MoeDispatcher::Auto:  // resolved: never Auto
      a.value("--moe-token-dispatcher-type", "alltoall");
      break;
  }
  if (job.plan.moe_a2a_overlap) {
    a.flag("--overlap-moe-expert-parallel-comm");
    a.flag("--delay-wgrad-compute");
  }
}

void model_shape(const Job& job, Args& a) {
  const ModelSpec& m = job.model;
  a.comment("model: " + m.name);
  a.value("--num-layers", m.num_layers);
  a.value("--hidden-size", m.hidden_size);
  a.value("--ffn-hidden-size", m.ffn_hidden_size);
  a.value("--num-attention-heads", m.num_attention_heads);
  if (m.num_query_groups != m.num_attention_heads) {
    a.flag("--group-query-attention");
    a.value("--num-query-groups", m.num_query_groups);
  }
  if (!m.mla && m.head_dim * m.num_attention_heads != m.hidden_size) {
    a.value("--kv-channels", m.head_dim);
  }
  if (m.activation == Activation::Swiglu) a.flag("--swiglu");
  if (m.normalization == Normalization::RmsNorm) a.value("--normalization", "RMSNorm");
  switch (m.position_embedding) {
    case PositionEmbedding::Rotary:
      a.value("--position-embedding-type", "rope");
      break;
    case PositionEmbedding::Learned:
      a.value("--position-embedding-type", "learned_absolute");
      break;
    case PositionEmbedding::Alibi:
      break;  // refused: megatron_refusal
  }
  if (m.position_embedding == PositionEmbedding::Rotary) {
    a.value("--rotary-base", static_cast<int64_t>(std::llround(m.rotary_base)));
    if (m.rope_scaling_factor > 0) {
      a.flag("--use-rope-scaling");
      a.value("--rope-scaling-factor", launch::number_text(m.rope_scaling_factor));
    }
  }
  // Megatron adds biases to every linear layer unless told not to (add_bias_linear).
  if (!m.linear_bias) a.flag("--disable-bias-linear");
  if (m.qkv_bias && !m.linear_bias) a.flag("--add-qkv-bias");
  if (m.qk_norm) a.flag("--qk-layernorm");
  if (!m.tied_embeddings) a.flag("--untie-embeddings-and-output-weights");
  if (launch::trains_without_dropout(m)) {
    a.value("--attention-dropout", "0.0");
    a.value("--hidden-dropout", "0.0");
  }
  if (m.mla) {
    a.flag("--multi-latent-attention");
    if (m.mla->q_lora_rank > 0) a.value("--q-lora-rank", m.mla->q_lora_rank);
    a.value("--kv-lora-rank", m.mla->kv_lora_rank);
    a.value("--qk-head-dim", m.mla->qk_nope_head_dim);
    a.value("--qk-pos-emb-head-dim", m.mla->qk_rope_head_dim);
    a.value("--v-head-dim", m.mla->v_head_dim);
  }
  if (m.moe) {
    a.value("--num-experts", m.moe->num_experts);
    a.value("--moe-router-topk", m.moe->top_k);
    a.value("--moe-ffn-hidden-size", m.moe->expert_ffn_hidden_size);
    if (m.moe->num_shared_experts > 0) {
      const int64_t shared = m.moe->shared_expert_ffn_hidden_size > 0
                                 ? m.moe->shared_expert_ffn_hidden_size
                                 : m.moe->num_shared_experts * m.moe->expert_ffn_hidden_size;
      a.value("--moe-shared-expert-intermediate-size", shared);
    }
    const auto pattern = launch::moe_layer_pattern(m);
    bool all_moe = true;
    for (int v : pattern) all_moe &= v == 1;
    if (!all_moe) {
      a.value("--moe-layer-freq", "\"" + launch::megatron_pattern_expression(pattern) + "\"");
    }
    if (job.plan.ep > 1) moe_dispatch(job, a);
    a.flag("--moe-grouped-gemm");  // the time model assumes the experts' GEMMs grouped
  }
  // Megatron pads the tokenizer's vocabulary to a multiple of this times tp; the model's
  // vocabulary (already padded where its config is) must stay as it is.
  a.value("--make-vocab-size-divisible-by", launch::vocab_divisor(m.vocab_size, job.plan.tp));
}

// Paths and schedule lengths only the user knows: placeholders to replace.
void data_and_checkpoints(const Job& job, Args& a) {
  a.comment("data, tokenizer, checkpoints and length: replace every <...> placeholder");
  a.value("--data-path", "<DATA_PREFIX>");
  a.value("--tokenizer-type", "HuggingFaceTokenizer");
  a.value("--tokenizer-model", "<TOKENIZER_NAME_OR_PATH>");
  a.value("--save", "<CHECKPOINT_DIR>");
  a.value("--load", "<CHECKPOINT_DIR>");
  if (!uses_megatron_fsdp(job.plan)) a.value("--ckpt-format", "torch_dist");
  a.value("--train-iters", "<TRAIN_ITERS>");
  a.value("--lr", "<LEARNING_RATE>");
}

}  // namespace

std::string export_megatron(const Job& job) {
  std::string out = launch::header(
      job, "Megatron-LM arguments (pretrain_gpt.py)",
      "NVIDIA/Megatron-LM megatron/training/arguments.py; '#' lines name what has no flag");
  Args a;
  parallelism(job, a);
  batch_and_precision(job, a);
  model_shape(job, a);
  data_and_checkpoints(job, a);
  if (job.training.method == TrainingMethod::Sft) {
    a.comment("training.method sft: full fine-tuning of the model in --load");
    a.flag("--finetune");
  }
  out += connections_line(job);
  if (launch::uses_expandable_segments(job)) {
    out +=
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True  # training.expandable_segments\n";
  }
  out += "MEGATRON_ARGS=(\n" + a.text() + ")\n";
  char launch_line[200];
  std::snprintf(launch_line, sizeof launch_line,
                "torchrun --nnodes %lld --nproc-per-node %lld%s pretrain_gpt.py "
                "\"${MEGATRON_ARGS[@]}\"\n",
                static_cast<long long>(job.cluster.num_nodes),
                static_cast<long long>(job.cluster.num_gpus / job.cluster.num_nodes),
                job.cluster.num_nodes > 1
                    ? " --node-rank <NODE_RANK> --master-addr <MASTER_ADDR> --master-port 6000"
                    : "");
  return out + launch_line;
}

}  // namespace parplan::tools
