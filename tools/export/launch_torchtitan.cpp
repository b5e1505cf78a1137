// A torchtitan job config as TOML, for torchtitan v0.2.2, the last release configured by TOML
// (main moved to Python config files in Feb 2026). Keys follow torchtitan/config/job_config.py
// at v0.2.2; pipeline schedule names are torch.distributed.pipelining's (get_schedule_class);
// models are those torchtitan ships (torchtitan/models/*/__init__.py), matched by shape.
#include <array>

#include "core/frameworks/registry.h"
#include "core/presets.h"
#include "cost_models/framework_traits.h"
#include "cost_models/moe_dispatch.h"
#include "tools/export/launch_settings.h"
#include "tools/import/import_job.h"

namespace parplan::tools {

namespace {

// torchtitan v0.2.2's model flavors (torchtitan/models/{llama3,qwen3,deepseek_v3}/__init__.py),
// by the shape parplan's model must have to be that flavor.
struct TorchtitanFlavor {
  const char* name;
  const char* flavor;
  int64_t num_layers, hidden_size, num_attention_heads, num_query_groups, num_experts, vocab_size;
  bool mla, qk_norm;
};
constexpr std::array<TorchtitanFlavor, 14> kFlavors = {{
    {"llama3", "8B", 32, 4096, 32, 8, 0, 128256, false, false},
    {"llama3", "70B", 80, 8192, 64, 8, 0, 128256, false, false},
    {"llama3", "405B", 126, 16384, 128, 8, 0, 128256, false, false},
    {"qwen3", "0.6B", 28, 1024, 16, 8, 0, 151936, false, true},
    {"qwen3", "1.7B", 28, 2048, 16, 8, 0, 151936, false, true},
    {"qwen3", "4B", 36, 2560, 32, 8, 0, 151936, false, true},
    {"qwen3", "8B", 36, 4096, 32, 8, 0, 151936, false, true},
    {"qwen3", "14B", 40, 5120, 40, 8, 0, 151936, false, true},
    {"qwen3", "32B", 64, 5120, 64, 8, 0, 151936, false, true},
    {"qwen3", "30B-A3B", 48, 2048, 32, 4, 128, 151936, false, true},
    {"qwen3", "235B-A22B", 94, 4096, 64, 4, 128, 151936, false, true},
    {"deepseek_v3", "16B", 27, 2048, 16, 16, 64, 129280, true, false},
    {"deepseek_v3", "236B", 60, 5120, 128, 128, 160, 129280, true, false},
    {"deepseek_v3", "671B", 61, 7168, 128, 128, 256, 129280, true, false},
}};

const TorchtitanFlavor* torchtitan_flavor(const ModelSpec& m) {
  const int64_t experts = m.moe ? m.moe->num_experts : 0;
  for (const TorchtitanFlavor& f : kFlavors) {
    if (f.num_layers == m.num_layers && f.hidden_size == m.hidden_size &&
        f.num_attention_heads == m.num_attention_heads && f.num_experts == experts &&
        f.vocab_size == m.vocab_size && f.mla == m.mla.has_value() && f.qk_norm == m.qk_norm &&
        (f.mla || f.num_query_groups == m.num_query_groups)) {
      return &f;
    }
  }
  return nullptr;
}

class Toml {
 public:
  void section(const std::string& name) { text_ += "\n[" + name + "]\n"; }
  void set(const std::string& key, const std::string& value) {
    text_ += key + " = " + value + "\n";
  }
  void set(const std::string& key, int64_t value) { set(key, std::to_string(value)); }
  void str(const std::string& key, const std::string& value) { set(key, "\"" + value + "\""); }
  void comment(const std::string& line) { text_ += "# " + line + "\n"; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

void training(const Job& job, Toml& t) {
  const ParallelPlan& p = job.plan;
  const TrainingSpec& tr = job.training;
  t.section("training");
  if (p.pp > 1) {
    // With pipelining the local batch is split into micro-batches of
    // pipeline_parallel_microbatch_size; without, micro-batches are gradient-accumulation steps.
    t.set("local_batch_size", tr.global_batch_size / p.dp);
  } else {
    t.set("local_batch_size", p.micro_batch_size);
  }
  t.set("global_batch_size", tr.global_batch_size);
  t.set("seq_len", tr.seq_length);
  switch (tr.precision) {
    case Precision::Fp32:
      t.str("mixed_precision_param", "float32");
      break;
    case Precision::Fp16:
      t.comment(
          "precision fp16: torchtitan's mixed_precision_param offers bfloat16 or float32 "
          "only");
      break;
    case Precision::Bf16:
    case Precision::Fp8:
      t.str("mixed_precision_param", "bfloat16");
      break;
  }
  t.str("mixed_precision_reduce", "float32");
  if (tr.method == TrainingMethod::Lora) {
    t.comment("training.method lora (rank " + std::to_string(tr.lora_rank) +
              "): this job config has no LoRA keys");
  } else if (tr.method == TrainingMethod::Sft) {
    t.comment("training.method sft: load the base model with [checkpoint] initial_load_path");
  }
}

}  // namespace

std::string launch::torchtitan_module_fqns(const Job& job) {
  const auto chunks = layers_per_chunk(job.model, job.plan);
  std::string out = "[";
  int64_t layer = 0;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    std::string part;
    auto add = [&](const std::string& name) {
      part += (part.empty() ? "\"" : ", \"") + name + "\"";
    };
    if (c == 0) add("tok_embeddings");
    for (int64_t i = 0; i < chunks[c]; ++i) add("layers." + std::to_string(layer++));
    if (c + 1 == chunks.size()) {
      add("norm");
      add("output");
    }
    out += (c == 0 ? "[" : ", [") + part + "]";
  }
  return out + "]";
}

namespace {

void parallelism(const Job& job, Toml& t) {
  const ParallelPlan& p = job.plan;
  t.section("parallelism");
  const int64_t shard = p.effective_zero_shard();
  switch (p.zero_stage) {
    case 0:
    case 1:  // refused: torchtitan_refusal
      t.set("data_parallel_replicate_degree", p.dp);
      t.set("data_parallel_shard_degree", 1);
      break;
    default:
      t.set("data_parallel_replicate_degree", p.dp / shard);
      t.set("data_parallel_shard_degree", shard);
      if (p.zero_stage == 2) {
        t.comment("zero_stage 2: FSDP keeping parameters gathered between forward and backward");
        t.str("fsdp_reshard_after_forward", "never");
      } else {
        // "default" reshards only without pipelining (parallelize.py); ZeRO-3 always does.
        t.str("fsdp_reshard_after_forward", "always");
      }
  }
  t.set("tensor_parallel_degree", p.tp);
  if (p.tp > 1 && !p.sequence_parallel) {
    t.comment("sequence_parallel false: torchtitan shards the sequence with every tp > 1");
  }
  t.set("context_parallel_degree", p.cp);
  t.set("pipeline_parallel_degree", p.pp);
  if (p.pp > 1) {
    const int64_t per_chunk = launch::even_layers_per_chunk(job);
    switch (p.schedule) {
      case ScheduleKind::OneFOneB:
        t.str("pipeline_parallel_schedule", "1F1B");
        break;
      case ScheduleKind::Gpipe:
        t.str("pipeline_parallel_schedule", "GPipe");
        break;
      case ScheduleKind::Interleaved:
        t.str("pipeline_parallel_schedule", "Interleaved1F1B");
        break;
      case ScheduleKind::ZeroBubble:
        t.str("pipeline_parallel_schedule", "InterleavedZeroBubble");  // vpp > 1: refusal
        break;
      case ScheduleKind::DualPipe:
        break;  // refused: torchtitan_refusal
    }
    t.set("pipeline_parallel_microbatch_size", p.micro_batch_size);
    // torchtitan counts the embedding and the output as layers of their stages
    // (pipeline_parallel.py, *_stage_less_layers, default 1): 0 makes its split parplan's.
    if (per_chunk > 0) {
      t.set("pipeline_parallel_layers_per_stage", per_chunk);
      t.set("pipeline_parallel_first_stage_less_layers", 0);
      t.set("pipeline_parallel_last_stage_less_layers", 0);
    } else {
      t.set("module_fqns_per_model_part", launch::torchtitan_module_fqns(job));
    }
  }
  if (job.model.moe) {
    t.set("expert_parallel_degree", p.ep);
    t.set("expert_tensor_parallel_degree", p.expert_tp());
    // The dispatcher the time model assumed (cost::resolved_moe_dispatcher; HybridEP and DeepEP
    // where v0.2.2 lacks it are refused).
    if (p.ep > 1) {
      t.str("expert_parallel_comm_backend",
            cost::resolved_moe_dispatcher(job) == MoeDispatcher::DeepEP ? "deepep" : "standard");
    }
  }
  if (p.order != "tp-cp-ep-dp-pp") {
    t.comment("plan.order " + p.order + ": torchtitan builds its own device mesh");
  }
}

}  // namespace

std::optional<std::pair<std::string, std::string>> launch::torchtitan_model(const ModelSpec& m) {
  const TorchtitanFlavor* f = torchtitan_flavor(m);
  if (!f) return std::nullopt;
  return std::pair<std::string, std::string>{f->name, f->flavor};
}

std::string preset_for_torchtitan_flavor(std::string_view name, std::string_view flavor) {
  for (const std::string& preset : model_preset_names()) {
    const auto model = find_model_preset(preset);
    const TorchtitanFlavor* f = model ? torchtitan_flavor(*model) : nullptr;
    if (f && f->name == name && f->flavor == flavor) return preset;
  }
  return "";
}

std::optional<ExportRefusal> launch::torchtitan_shared_refusal(const Job& job) {
  const ParallelPlan& p = job.plan;
  if (torchtitan_flavor(job.model) == nullptr) {
    return ExportRefusal{"model", job.model.name,
                         "its own models only: llama3 8B/70B/405B, qwen3 0.6B-32B, 30B-A3B and "
                         "235B-A22B, deepseek_v3 16B/236B/671B (torchtitan/models)",
                         std::nullopt, ""};
  }
  // torchtitan's activation checkpointing is its own (none, selective op/layer, full): it has
  // no Megatron recompute modules and no activation offloading.
  if (p.recompute_modules != 0) {
    ParallelPlan nearest = p;
    nearest.recompute_modules = 0;
    return ExportRefusal{"plan.recompute_modules", launch::recompute_module_list(p, ","),
                         "none: torchtitan's selective checkpointing is per op or per layer",
                         nearest, "plan.recompute_modules unset"};
  }
  if (p.offload_activation_layers > 0) {
    ParallelPlan nearest = p;
    nearest.offload_activation_layers = 0;
    nearest.recompute = Recompute::Full;
    return ExportRefusal{"plan.offload_activation_layers",
                         std::to_string(p.offload_activation_layers),
                         "0: torchtitan does not offload activations to host memory", nearest,
                         "full activation checkpointing instead"};
  }
  if (p.zero_stage == 1) {
    ParallelPlan nearest = p;
    nearest.zero_stage = 2;
    return ExportRefusal{"plan.zero_stage", "1",
                         "0 (DDP), 2 or 3 (FSDP2): it has no optimizer-only sharding", nearest,
                         "plan.zero_stage 2"};
  }
  // The planner's rules for torchtitan (core/frameworks/torchtitan.cpp) are its refusals too.
  const PlannerSupport& support = framework_info(Framework::Torchtitan).planner_support;
  // models/llama3/infra/parallelize.py: DDP only when data parallelism is the only one
  // ("DDP has not supported > 1D parallelism"); with tp, pp or cp it must be FSDP2.
  if (support.rejects_ddp_beside(p)) {
    ParallelPlan nearest = p;
    nearest.zero_stage = 2;
    return ExportRefusal{"plan.zero_stage",
                         "0 with tp*pp*cp = " + std::to_string(p.tp * p.pp * p.cp),
                         "DDP (zero_stage 0) only as the sole parallelism; with tp, pp or cp, "
                         "FSDP2 (2 or 3)",
                         nearest, "plan.zero_stage 2"};
  }
  // distributed/parallel_dims.py (v0.2.2 _validate): with ep > 1, expert tensor parallelism 1
  // or tp; without, apply_moe_ep_tp (models/llama4/infra/parallelize.py) runs the experts on the
  // tensor-parallel mesh. The nearest keeps tp for the experts where the expert-parallel ranks
  // allow it.
  if (support.rejects_expert_tp(p)) {
    ParallelPlan nearest = p;
    nearest.etp = p.tp;
    if (support.rejects_ep_outside_sharded_ranks(nearest)) nearest.etp = 1;
    return ExportRefusal{"plan.etp",
                         std::to_string(p.expert_tp()) + " with tp " + std::to_string(p.tp),
                         "tp (" + std::to_string(p.tp) + "), or 1 with expert parallelism", nearest,
                         "plan.etp " + std::to_string(nearest.etp)};
  }
  // distributed/parallel_dims.py: experts are spread over dp_shard x cp (x tp for experts
  // without tensor parallelism), PlannerSupport::ep_within_sharded_ranks.
  if (support.rejects_ep_outside_sharded_ranks(p)) {
    ParallelPlan nearest = p;
    nearest.zero_stage = 3;
    nearest.zero_shard_size = 0;
    const int64_t pool = PlannerSupport::expert_parallel_rank_pool(p);
    return ExportRefusal{
        "plan.ep", std::to_string(p.ep),
        std::string("a divisor of data_parallel_shard_degree x cp") +
            (p.expert_tp() == 1 ? " x tp (experts without tensor parallelism)" : "") + " = " +
            std::to_string(pool),
        support.rejects_ep_outside_sharded_ranks(nearest) ? std::nullopt
                                                          : std::optional<ParallelPlan>(nearest),
        "plan.zero_stage 3, sharded over all of dp"};
  }
  const bool zero_bubble_h1 = p.schedule == ScheduleKind::ZeroBubble && p.vpp == 1;
  if (p.pp > 1 && (zero_bubble_h1 || p.schedule == ScheduleKind::DualPipe)) {
    const ParallelPlan nearest = launch::with_1f1b_schedule(p);
    return ExportRefusal{"plan.schedule", to_string(p.schedule),
                         "GPipe, 1F1B, Interleaved1F1B, and zero-bubble only with several stages "
                         "per rank (InterleavedZeroBubble)",
                         nearest, std::string("plan.schedule ") + to_string(nearest.schedule)};
  }
  if (job.training.method == TrainingMethod::Lora) {
    return ExportRefusal{"training.method", "lora", "pretrain or sft (no LoRA in v0.2.2)",
                         std::nullopt, ""};
  }
  // Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm): torchtitan's schedules
  // run one micro-batch's forward or backward at a time.
  if (p.moe_a2a_overlap) {
    ParallelPlan nearest = p;
    nearest.moe_a2a_overlap = false;
    return ExportRefusal{"plan.moe_a2a_overlap", "true",
                         "false: torchtitan has no batch-level overlap of the expert-parallel "
                         "all-to-alls (Megatron-Core's combined 1F1B)",
                         nearest, "plan.moe_a2a_overlap false"};
  }
  return std::nullopt;
}

namespace {

// v0.2.2's expert-parallel backends (job_config.py Parallelism.expert_parallel_comm_backend:
// "standard" all-to-all or "deepep"): DeepEP only for deepseek_v3 (llama4 too, no parplan
// model; the other models' parallelize functions never read the key), with expert parallelism
// and without expert tensor parallelism (deepseek_v3/infra/parallelize.py raises otherwise).
// No HybridEP.
bool v022_runs_deepep(const Job& job) {
  const TorchtitanFlavor* f = torchtitan_flavor(job.model);
  return f && std::string(f->name) == "deepseek_v3" && job.plan.ep > 1 && job.plan.expert_tp() == 1;
}

std::optional<ExportRefusal> v022_dispatcher_refusal(const Job& job) {
  if (!job.model.moe || job.plan.ep <= 1) return std::nullopt;  // no dispatch to choose
  const MoeDispatcher dispatcher = cost::resolved_moe_dispatcher(job);
  if (dispatcher == MoeDispatcher::AllToAll) return std::nullopt;
  if (dispatcher == MoeDispatcher::DeepEP && v022_runs_deepep(job)) return std::nullopt;
  ParallelPlan nearest = job.plan;
  nearest.moe_dispatcher = v022_runs_deepep(job) ? MoeDispatcher::DeepEP : MoeDispatcher::AllToAll;
  return ExportRefusal{
      "plan.moe_dispatcher",
      std::string(to_string(dispatcher)) +
          (job.plan.moe_dispatcher == MoeDispatcher::Auto ? " (auto for this plan)" : ""),
      "alltoall, or deepep for deepseek_v3 without expert tensor parallelism "
      "(expert_parallel_comm_backend; torchtitan main runs both DeepEP and HybridEP: "
      "--torchtitan-version main)",
      nearest, std::string("plan.moe_dispatcher ") + to_string(nearest.moe_dispatcher)};
}

// v0.2.2's MXFP8 converter asserts "TP not yet supported with torch.compile for mxfp8"
// (components/quantization/mx.py) when the model is compiled with tp > 1.
std::optional<ExportRefusal> v022_mxfp8_compile_refusal(const Job& job) {
  if (!job.training.compiles_model() || job.plan.tp <= 1) return std::nullopt;
  if (job.training.precision != Precision::Fp8 ||
      std::string(launch::fp8_launch(job).torchtitan_converter) != "mx") {
    return std::nullopt;
  }
  return ExportRefusal{"training.torch_compile",
                       "true with MXFP8 and tp " + std::to_string(job.plan.tp),
                       "torch_compile false, or tp 1, with MXFP8 at v0.2.2 (--torchtitan-version "
                       "main runs it)",
                       std::nullopt, ""};
}

}  // namespace

std::optional<ExportRefusal> torchtitan_refusal(const Job& job) {
  if (auto refusal = launch::torchtitan_shared_refusal(job)) return refusal;
  if (auto refusal = v022_mxfp8_compile_refusal(job)) return refusal;
  return v022_dispatcher_refusal(job);
}

std::string export_torchtitan(const Job& job) {
  std::string out = launch::header(job, "torchtitan v0.2.2 job config (TOML)",
                                   "pytorch/torchtitan v0.2.2 torchtitan/config/job_config.py; "
                                   "'#' lines name what has no key");
  Toml t;
  t.section("model");
  if (const TorchtitanFlavor* f = torchtitan_flavor(job.model)) {
    t.str("name", f->name);
    t.str("flavor", f->flavor);
  }
  t.str("hf_assets_path", "<HF_ASSETS_PATH>");
  if (job.training.precision == Precision::Fp8) {
    // Registered converter names (torchtitan/components/quantization) for the fp8 recipe all
    // formats share (launch::fp8_launch): float8 (tensorwise) before Blackwell, mx (MXFP8) on
    // it; grouped expert GEMMs get the matching converter.
    const std::string kind = launch::fp8_launch(job).torchtitan_converter;
    std::string converters = "[\"quantize.linear." + kind + "\"";
    if (job.model.moe) converters += ", \"quantize.grouped_mm." + kind + "\"";
    t.set("converters", converters + "]");
  }
  training(job, t);
  parallelism(job, t);
  // torch.compile (job_config.py Compile.enable, off by default): the cost model's norms,
  // rotary embedding and activations are fused kernels when on, eager ops when off.
  t.section("compile");
  t.set("enable", job.training.compiles_model() ? "true" : "false");
  t.section("activation_checkpoint");
  switch (job.plan.recompute) {
    case Recompute::None:
      t.str("mode", "none");
      break;
    case Recompute::Selective:
      t.str("mode", "selective");
      t.str("selective_ac_option", "op");
      break;
    case Recompute::Full:
      t.str("mode", "full");
      break;
  }
  return out + t.text();
}

}  // namespace parplan::tools
