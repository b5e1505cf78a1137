// A torchtitan config for its main branch (pytorch/torchtitan at b5bcd76c), where a run is a
// Python function returning Trainer.Config (commit 9810191b replaced the TOML job config;
// torchtitan/config/README.md). The function starts from torchtitan's own baseline for the
// model family (torchtitan/models/<family>/config_registry.py: data, optimizer, schedule) and
// sets the model flavor, ParallelismConfig, TrainingConfig and activation checkpointing of
// torchtitan/config/configs.py and torchtitan/distributed/activation_checkpoint.py. Tested in
// tests/tools/export_test.cpp against tests/data/export/torchtitan_main_keys.txt.
#include <cstdio>

#include "core/check.h"
#include "cost_models/moe_dispatch.h"
#include "tools/export/launch_settings.h"

namespace parplan::tools {

namespace {

// Baseline config functions torchtitan main ships per (family, flavor); other flavors start
// from the family's first listed baseline and swap the model.
struct Baseline {
  const char* family;
  const char* flavor;
  const char* function;
};
constexpr Baseline kBaselines[] = {
    {"llama3", "8B", "llama3_8b"},
    {"llama3", "70B", "llama3_70b"},
    {"llama3", "405B", "llama3_405b"},
    {"qwen3", "14B", "qwen3_14b"},
    {"qwen3", "0.6B", "qwen3_0_6b"},
    {"qwen3", "1.7B", "qwen3_1_7b"},
    {"qwen3", "32B", "qwen3_32b"},
    {"qwen3", "30B-A3B", "qwen3_30b_a3b"},
    {"deepseek_v3", "671B", "deepseek_v3_671b"},
    {"deepseek_v3", "16B", "deepseek_v3_16b"},
};

const char* baseline_function(const std::string& family, const std::string& flavor) {
  const char* first = nullptr;
  for (const Baseline& b : kBaselines) {
    if (family != b.family) continue;
    if (flavor == b.flavor) return b.function;
    if (!first) first = b.function;
  }
  return first;
}

std::string schedule_name(ScheduleKind schedule) {
  switch (schedule) {
    case ScheduleKind::Gpipe:
      return "GPipe";
    case ScheduleKind::Interleaved:
      return "Interleaved1F1B";
    case ScheduleKind::ZeroBubble:
      return "InterleavedZeroBubble";  // vpp 1 is refused
    case ScheduleKind::OneFOneB:
    case ScheduleKind::DualPipe:  // refused
      break;
  }
  return "1F1B";
}

std::string parallelism(const Job& job) {
  const ParallelPlan& p = job.plan;
  std::string out = "    config.parallelism = ParallelismConfig(\n";
  auto arg = [&](const std::string& name, const std::string& value) {
    out += "        " + name + "=" + value + ",\n";
  };
  auto num = [&](const std::string& name, int64_t value) { arg(name, std::to_string(value)); };
  const int64_t shard = p.zero_stage >= 2 ? p.effective_zero_shard() : 1;
  num("data_parallel_replicate_degree", p.dp / shard);
  num("data_parallel_shard_degree", shard);
  if (p.zero_stage >= 2) {
    // "default" reshards only without pipelining; ZeRO-2 keeps parameters, ZeRO-3 does not.
    arg("fsdp_reshard_after_forward", p.zero_stage == 2 ? "\"never\"" : "\"always\"");
  }
  num("tensor_parallel_degree", p.tp);
  arg("enable_sequence_parallel", p.tp > 1 && p.sequence_parallel ? "True" : "False");
  num("context_parallel_degree", p.cp);
  num("pipeline_parallel_degree", p.pp);
  if (p.pp > 1) {
    arg("pipeline_parallel_schedule", "\"" + schedule_name(p.schedule) + "\"");
    // Micro-batches per data-parallel rank and step (no further gradient accumulation).
    num("num_pp_microbatches", job.training.global_batch_size / (p.dp * p.micro_batch_size));
    const int64_t per_chunk = launch::even_layers_per_chunk(job);
    if (per_chunk > 0) {
      num("pipeline_parallel_layers_per_stage", per_chunk);
      num("pipeline_parallel_first_stage_less_layers", 0);
      num("pipeline_parallel_last_stage_less_layers", 0);
    } else {
      arg("module_fqns_per_model_part", launch::torchtitan_module_fqns(job));
    }
  }
  if (job.model.moe) num("expert_parallel_degree", p.ep);
  return out + "    )\n";
}

}  // namespace

std::optional<ExportRefusal> torchtitan_main_refusal(const Job& job) {
  const ParallelPlan& p = job.plan;
  // configs.py expert_parallel_degree: "EP borrows ranks from FSDP and TP", so experts run
  // without tensor parallelism (main has no expert tensor-parallel key). Checked before the
  // rules shared with v0.2.2, whose expert-tp and expert-rank rules assume v0.2.2's etp.
  if (job.model.moe && p.ep > 1 && p.expert_tp() > 1) {
    ParallelPlan nearest = p;
    nearest.etp = 1;
    return ExportRefusal{
        "plan.ep",
        std::to_string(p.ep) + " with expert tensor parallelism " + std::to_string(p.expert_tp()),
        "experts without tensor parallelism (expert parallelism takes its ranks "
        "from FSDP and TP); v0.2.2 has expert_tensor_parallel_degree "
        "(--torchtitan-version v0.2.2)",
        nearest, "plan.etp 1"};
  }
  // Main runs DeepEP and HybridEP for every MoE model parplan matches (qwen3, deepseek_v3:
  // model_registry(moe_comm_backend=...)), so v0.2.2's dispatcher refusal does not apply.
  return launch::torchtitan_shared_refusal(job);
}

std::string export_torchtitan_main(const Job& job) {
  const auto model = launch::torchtitan_model(job.model);
  PARPLAN_ASSERT(model.has_value());  // refused otherwise
  const auto& [family, flavor] = *model;
  const ParallelPlan& p = job.plan;
  std::string out =
      launch::header(job, "torchtitan main (pytorch/torchtitan b5bcd76c) Python config",
                     "pytorch/torchtitan b5bcd76c torchtitan/config/configs.py, "
                     "torchtitan/models/" +
                         family + "/config_registry.py; '#' lines are notes");
  out +=
      "# Python config registry since commit 9810191b; for TOML use --torchtitan-version v0.2.2\n";
  out += "# run: save as parplan_config.py on PYTHONPATH, then NGPU=" +
         std::to_string(job.cluster.node.gpus_per_node) +
         " MODULE=parplan_config CONFIG=parplan_config ./run_train.sh (one node; on " +
         std::to_string(job.cluster.num_nodes) +
         " nodes: torchrun --nnodes ... -m torchtitan.train --module parplan_config --config "
         "parplan_config)\n";
  const bool fp8 = job.training.precision == Precision::Fp8;
  const bool mx = fp8 && std::string(launch::fp8_launch(job).torchtitan_converter) == "mx";
  const std::string linear = mx ? "MXFP8LinearConverter" : "Float8LinearConverter";
  const std::string grouped = mx ? "MXFP8GroupedExpertsConverter" : "Float8GroupedExpertsConverter";
  const char* baseline = baseline_function(family, flavor);
  out += "from torchtitan.config import CompileConfig, ParallelismConfig\n";
  if (fp8) {
    out += "from torchtitan.components.quantization import " + linear +
           (job.model.moe ? ", " + grouped : "") + "\n";
  }
  out += "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n";
  out += "from torchtitan.models." + family + " import model_registry\n";
  out += "from torchtitan.models." + family + ".config_registry import " + baseline + "\n";
  out += "from torchtitan.trainer import Trainer\n\n\n";
  out += "def parplan_config() -> Trainer.Config:\n";
  out += "    config = " + std::string(baseline) +
         "()  # torchtitan's baseline: data, optimizer, schedule\n";
  std::string converters;
  if (fp8) {
    // The fp8 recipe all formats share (launch::fp8_launch).
    // The converters read whether the model is compiled (QuantizationConverter.Config
    // model_compile_enabled, as torchtitan's own baselines set it from CompileConfig).
    const std::string args = job.training.compiles_model() ? "model_compile_enabled=True" : "";
    converters = ", converters=[" + linear + ".Config(" + args + ")" +
                 (job.model.moe ? ", " + grouped + ".Config(" + args + ")" : "") + "]";
  }
  // The dispatcher the time model assumed (cost::resolved_moe_dispatcher): models/common/
  // config_utils.py make_token_dispatcher_config, "deepep" or "hybridep"; "standard" (the
  // all-to-all) by default.
  std::string backend;
  if (job.model.moe && p.ep > 1) {
    const MoeDispatcher dispatcher = cost::resolved_moe_dispatcher(job);
    if (is_flex_dispatcher(dispatcher)) {
      backend = std::string(", moe_comm_backend=\"") + to_string(dispatcher) + "\"";
    }
  }
  out += "    config.model_spec = model_registry(\"" + flavor + "\"" + backend + converters + ")\n";
  out += "    config.hf_assets_path = \"<HF_ASSETS_PATH>\"  # replace: tokenizer and weights\n";
  out += parallelism(job);
  const TrainingSpec& t = job.training;
  auto training = [&](const std::string& name, const std::string& value) {
    out += "    config.training." + name + " = " + value + "\n";
  };
  training("num_tokens_per_microbatch_per_dp_rank",
           std::to_string(p.micro_batch_size * t.seq_length));
  training("num_tokens_per_train_step", std::to_string(t.global_batch_size * t.seq_length));
  training("max_context_length", std::to_string(t.seq_length));
  training("mixed_precision_param",
           t.precision == Precision::Fp32 ? "\"float32\"" : "\"bfloat16\"");
  training("mixed_precision_reduce", "\"float32\"");
  if (t.method == TrainingMethod::Sft) {
    out += "    # training.method sft: load the base model's weights through config.checkpoint\n";
  }
  if (t.precision == Precision::Fp16) {
    out += "    # precision fp16: mixed_precision_param offers bfloat16 or float32 only\n";
  }
  // Set either way: some baselines compile (llama3_405b: CompileConfig(enable=True,
  // enable_async_tensor_parallel=True)), and the cost model's norms, rotary embedding and
  // activations are fused kernels only with torch.compile (configs.py CompileConfig). This
  // also drops that baseline's async TP, which torchtitan's cost traits do not model
  // (FrameworkTraits::tp_comm_overlap false).
  out += std::string("    config.compile = CompileConfig(enable=") +
         (t.compiles_model() ? "True" : "False") + ")\n";
  switch (p.recompute) {
    case Recompute::None:
      out += "    config.activation_checkpoint = None\n";
      break;
    case Recompute::Selective:
      out += "    config.activation_checkpoint = SelectiveAC.Config()\n";
      break;
    case Recompute::Full:
      out += "    config.activation_checkpoint = FullAC.Config()\n";
      break;
  }
  return out + "    return config\n";
}

}  // namespace parplan::tools
