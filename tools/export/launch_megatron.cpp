// Megatron-LM command-line flags (pretrain_gpt.py) as a bash array. Flag names follow
// NVIDIA/Megatron-LM megatron/training/arguments.py (checked at commit 000c4ac24f61).
#include <cstdio>

#include "cost_models/framework_traits.h"
#include "tools/export/launch_settings.h"

namespace parplan::tools {

namespace {

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

void parallelism(const Job& job, Args& a) {
  const ParallelPlan& p = job.plan;
  const auto traits = cost::framework_traits(job.framework, job.training, p);
  a.comment("parallelism (data-parallel size " + std::to_string(p.dp) +
            " = world size / (tp*pp*cp), derived by Megatron)");
  a.value("--tensor-model-parallel-size", p.tp);
  a.value("--pipeline-model-parallel-size", p.pp);
  if (p.vpp > 1) {
    if (const int64_t per_chunk = launch::even_layers_per_chunk(job); per_chunk > 0) {
      a.value("--num-layers-per-virtual-pipeline-stage", per_chunk);
    } else {
      a.value("--num-virtual-stages-per-pipeline-rank", p.vpp);
      a.comment(
          "uneven layers per model chunk: no flag sets parplan's split; see "
          "--pipeline-model-parallel-layout");
    }
  } else if (p.pp > 1 && launch::even_layers_per_chunk(job) == 0) {
    const auto chunks = layers_per_chunk(job.model, p);
    bool middle_even = true;
    for (std::size_t i = 2; i + 1 < chunks.size(); ++i) middle_even &= chunks[i] == chunks[1];
    if (middle_even && chunks.size() > 2) {
      a.value("--decoder-first-pipeline-num-layers", chunks.front());
      a.value("--decoder-last-pipeline-num-layers", chunks.back());
    } else {
      a.comment(
          "this split of layers over stages has no flag; see "
          "--pipeline-model-parallel-layout");
    }
  }
  if (p.cp > 1) a.value("--context-parallel-size", p.cp);
  if (p.ep > 1) a.value("--expert-model-parallel-size", p.ep);
  if (job.model.moe && p.expert_tp() != p.tp) {
    a.value("--expert-tensor-parallel-size", p.expert_tp());
  }
  if (p.sequence_parallel && p.tp > 1) a.flag("--sequence-parallel");
  if (p.order == "tp-cp-ep-pp-dp") {
    a.flag("--use-tp-pp-dp-mapping");
  } else if (p.order != "tp-cp-ep-dp-pp") {
    a.comment("plan.order " + p.order +
              ": Megatron offers tp-cp-ep-dp-pp (default) and tp-cp-ep-pp-dp only");
  }
  switch (p.schedule) {
    case ScheduleKind::OneFOneB:
    case ScheduleKind::Interleaved:
      break;
    default:
      a.comment(std::string("plan.schedule ") + to_string(p.schedule) +
                ": no Megatron-LM flag selects it (1F1B, or interleaved with virtual stages)");
  }
  if (p.zero_stage == 1) {
    a.flag("--use-distributed-optimizer");
    if (p.zero_shard_size > 0 && p.zero_shard_size < p.dp) {
      a.value("--num-distributed-optimizer-instances", p.dp / p.zero_shard_size);
    }
  } else if (p.zero_stage >= 2) {
    a.comment(p.zero_stage == 2 ? "zero_stage 2: Megatron FSDP sharding optimizer state and "
                                  "gradients"
                                : "zero_stage 3: Megatron FSDP sharding optimizer state, "
                                  "gradients and parameters");
    a.flag("--use-megatron-fsdp");
    a.value("--data-parallel-sharding-strategy",
            p.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    a.flag("--use-distributed-optimizer");
    a.flag("--no-gradient-accumulation-fusion");
    if (p.zero_shard_size > 0 && p.zero_shard_size < p.dp) {
      a.comment("zero_shard_size " + std::to_string(p.zero_shard_size) +
                ": hybrid sharding is not set here (Megatron FSDP HSDP options)");
    }
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
      a.flag("--bf16");
      a.value("--fp8-format", "hybrid");
      // The memory and time model's fp8 layout (core/frameworks/cost_traits.h, fp8_params):
      // per-tensor scaling with fp8 parameters gathered in fp8 on Hopper; MXFP8 with 16-bit
      // parameters on Blackwell.
      const auto traits = cost::framework_traits(job.framework, t, p);
      if (cost::fp8_params_apply(traits, job.cluster.node.gpu)) {
        a.flag("--fp8-param-gather");
      } else if (cost::fp8_recipe_is_mxfp8(job.cluster.node.gpu)) {
        a.value("--fp8-recipe", "mxfp8");
      }
      break;
    }
  }
  if (p.recompute == Recompute::Selective) {
    a.value("--recompute-granularity", "selective");
  } else if (p.recompute == Recompute::Full) {
    a.value("--recompute-granularity", "full");
    a.value("--recompute-method", "uniform");
    a.value("--recompute-num-layers", 1);
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
      a.comment("position embedding alibi: Megatron-Core has no ALiBi option");
      break;
  }
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
    if (job.plan.ep > 1) a.value("--moe-token-dispatcher-type", "alltoall");
  }
  a.comment("vocabulary: " + std::to_string(m.vocab_size) +
            " tokens, set by your tokenizer arguments (--vocab-size with NullTokenizer)");
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
  switch (job.training.method) {
    case TrainingMethod::Sft:
      a.comment(
          "training.method sft: full fine-tuning; load the base model with --finetune "
          "and --load");
      break;
    case TrainingMethod::Lora:
      a.comment(
          "training.method lora: Megatron-LM has no LoRA arguments; use --format nemo "
          "(Megatron-Bridge PEFT)");
      break;
    case TrainingMethod::Pretrain:
      break;
  }
  out += "MEGATRON_ARGS=(\n" + a.text() + ")\n";
  char launch_line[200];
  std::snprintf(launch_line, sizeof launch_line,
                "# launch: torchrun --nnodes %lld --nproc-per-node %lld pretrain_gpt.py "
                "\"${MEGATRON_ARGS[@]}\" plus data, tokenizer and optimizer arguments\n",
                static_cast<long long>(job.cluster.num_nodes),
                static_cast<long long>(job.cluster.num_gpus / job.cluster.num_nodes));
  return out + launch_line;
}

}  // namespace parplan::tools
