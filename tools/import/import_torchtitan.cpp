// A torchtitan v0.2.2 TOML job config read back into a job: the keys of launch_torchtitan.cpp
// (torchtitan/config/job_config.py at v0.2.2), the model by [model] name and flavor, the
// pipeline split by torchtitan's own rule (pipeline_parallel.py: embedding and output count
// as first_stage_less_layers / last_stage_less_layers layers of their stages).
#include "core/check.h"
#include "core/checked_int.h"
#include "core/presets.h"
#include "tools/import/import_job.h"

namespace parplan::tools {

namespace {

// torchtitan's split of `layers` into `stages` stages (generate_llm_fqn_per_model_part): the
// embedding and output weigh first_less and last_less layers.
std::vector<int64_t> torchtitan_split(int64_t layers, int64_t stages, int64_t first_less,
                                      int64_t last_less) {
  const int64_t units = layers + first_less + last_less;
  std::vector<int64_t> out(stages, units / stages);
  for (int64_t i = 0; i < units % stages; ++i) ++out[i];
  out.front() -= first_less;
  out.back() -= last_less;
  return out;
}

std::string schedule_of(SettingTable& s, bool* multi_stage) {
  const LaunchSetting* setting = s.get("parallelism.pipeline_parallel_schedule");
  const std::string name = setting ? setting->value : "1F1B";
  *multi_stage = name != "1F1B" && name != "GPipe";
  if (name == "1F1B") return "1f1b";
  if (name == "GPipe") return "gpipe";
  if (name == "Interleaved1F1B") return "interleaved";
  if (name == "InterleavedZeroBubble" || name == "ZBVZeroBubble") return "zero-bubble";
  if (name == "DualPipeV") return "dualpipe";
  s.fail(*setting, name,
         "1F1B, GPipe, Interleaved1F1B, InterleavedZeroBubble, ZBVZeroBubble or "
         "DualPipeV (parplan models no LoopedBFS)");
}

}  // namespace

ImportDraft read_torchtitan_launch(SettingTable& s, int64_t gpus_if_known) {
  ImportDraft d;
  d.framework = "torchtitan";
  const LaunchSetting* name = s.get("model.name");
  const LaunchSetting* flavor = s.get("model.flavor");
  if (!name || !flavor) {
    throw InputError(s.file(), "model.name", "no [model] name and flavor",
                     "a torchtitan model and flavor (llama3 8B, qwen3 32B, deepseek_v3 671B, ...)");
  }
  d.model_preset = preset_for_torchtitan_flavor(name->value, flavor->value);
  if (d.model_preset.empty()) {
    s.fail(*flavor, name->value + " " + flavor->value,
           "a flavor parplan has a preset for (llama3 8B/70B/405B, qwen3 0.6B-32B, 30B-A3B, "
           "235B-A22B, deepseek_v3 16B/236B/671B)");
  }
  s.get("model.hf_assets_path");
  const std::string converters = s.text("model.converters").value_or("");
  const bool fp8 = converters.find("quantize.linear.float8") != std::string::npos ||
                   converters.find("quantize.linear.mx") != std::string::npos;
  const std::string param = s.text("training.mixed_precision_param").value_or("bfloat16");
  s.get("training.mixed_precision_reduce");
  Json& t = d.training;
  t["precision"] = fp8 ? "fp8" : param == "float32" ? "fp32" : "bf16";
  t["seq_length"] = s.required_integer("training.seq_len");
  // job_config.py Compile.enable (off by default) compiles the components listed, "model" and
  // "loss" by default: the model's kernels are fused only when "model" is among them.
  const bool compile = s.boolean("compile.enable").value_or(false);
  const auto components = s.text("compile.components");
  if (compile && (!components || components->find("model") != std::string::npos)) {
    t["torch_compile"] = true;
  }
  s.get("compile.backend");
  t["method"] = "pretrain";

  Json& p = d.plan;
  const int64_t tp = s.integer("parallelism.tensor_parallel_degree").value_or(1);
  const int64_t cp = s.integer("parallelism.context_parallel_degree").value_or(1);
  const int64_t pp = s.integer("parallelism.pipeline_parallel_degree").value_or(1);
  const int64_t replicate = s.integer("parallelism.data_parallel_replicate_degree").value_or(1);
  int64_t shard = 0;  // -1 (the default): every GPU left
  if (const LaunchSetting* v = s.get("parallelism.data_parallel_shard_degree");
      v && v->value != "-1") {
    shard = s.integer("parallelism.data_parallel_shard_degree").value_or(0);
  }
  if (shard > 0) {
    d.num_gpus = saturating_product({replicate, shard, tp, cp, pp});
  } else if (gpus_if_known > 0) {
    shard = gpus_if_known / saturating_product({replicate, tp, cp, pp});
  } else {
    throw InputError(s.file(), "parallelism.data_parallel_shard_degree", "-1 (fill the GPUs)",
                     "a degree, or --nodes N to say how many GPUs there are");
  }
  p["tp"] = tp;
  p["cp"] = cp;
  p["pp"] = pp;
  p["sequence_parallel"] = tp > 1;  // torchtitan shards the sequence with every tp > 1
  p["ep"] = s.integer("parallelism.expert_parallel_degree").value_or(1);
  d.expert_tp = s.integer("parallelism.expert_tensor_parallel_degree");
  // job_config.py Parallelism.expert_parallel_comm_backend: "standard" (all-to-all) or "deepep".
  if (const LaunchSetting* backend = s.get("parallelism.expert_parallel_comm_backend")) {
    if (backend->value != "standard" && backend->value != "deepep") {
      s.fail(*backend, backend->value, "\"standard\" or \"deepep\"");
    }
    d.moe_dispatcher = backend->value == "deepep" ? "deepep" : "alltoall";
  }
  const std::string reshard = s.text("parallelism.fsdp_reshard_after_forward").value_or("default");
  p["zero_stage"] = shard == 1            ? 0
                    : reshard == "never"  ? 2
                    : reshard == "always" ? 3
                    : pp > 1              ? 2
                                          : 3;
  if (shard > 1 && replicate > 1) p["zero_shard_size"] = shard;
  const int64_t dp = saturating_product({replicate, shard});
  if (shard < 1 || pp > find_model_preset(d.model_preset)->num_layers + kEndChunksWithoutLayers) {
    throw InputError(s.file(), "parallelism", "degrees that do not fit the GPUs or the layers",
                     "replicate * shard * tp * cp * pp = the GPU count, pp up to the layers + 2");
  }
  const int64_t local = s.required_integer("training.local_batch_size");
  const auto global = s.text("training.global_batch_size");
  t["global_batch_size"] = global && *global != "-1"
                               ? s.integer("training.global_batch_size").value_or(local * dp)
                               : local * dp;

  bool multi_stage = false;
  p["schedule"] = pp > 1 ? schedule_of(s, &multi_stage) : "1f1b";
  p["micro_batch_size"] =
      pp > 1 ? s.integer("parallelism.pipeline_parallel_microbatch_size").value_or(1) : local;
  const int64_t layers = find_model_preset(d.model_preset)->num_layers;
  const int64_t first_less =
      s.count("parallelism.pipeline_parallel_first_stage_less_layers").value_or(1);
  const int64_t last_less =
      s.count("parallelism.pipeline_parallel_last_stage_less_layers").value_or(1);
  if (const LaunchSetting* parts = s.get("parallelism.module_fqns_per_model_part")) {
    const auto list = split_flow_list(parts->value);
    if (!list) s.fail(*parts, parts->value, "a list of lists of module names");
    for (const std::string& part : *list) {
      const auto names = split_flow_list(part);
      if (!names) s.fail(*parts, part, "a list of module names");
      int64_t n = 0;
      for (const std::string& m : *names) n += m.rfind("layers.", 0) == 0;
      d.chunk_layers.push_back(n);
    }
  } else if (auto per = s.integer("parallelism.pipeline_parallel_layers_per_stage");
             per && pp > 1) {
    // As many stages as whole stages of `per` layers take (pipeline_parallel.py).
    const int64_t units = layers + first_less + last_less;
    d.chunk_layers = torchtitan_split(layers, (units + *per - 1) / *per, first_less, last_less);
  } else if (pp > 1) {
    // Without layers_per_stage: one stage per rank for single-stage schedules, two for
    // multi-stage ones (pipeline_parallel.py).
    d.chunk_layers = torchtitan_split(layers, multi_stage ? 2 * pp : pp, first_less, last_less);
  }
  p["vpp"] =
      pp > 1 && !d.chunk_layers.empty() ? static_cast<int64_t>(d.chunk_layers.size()) / pp : 1;
  const auto mode = s.text("activation_checkpoint.mode");
  if (!mode) d.notes.push_back("activation_checkpoint.mode absent: taken as selective (v0.2.2)");
  p["recompute"] = mode.value_or("selective");
  s.get("activation_checkpoint.selective_ac_option");
  s.mark_read_prefix("job.");
  s.mark_read_prefix("checkpoint.");
  s.mark_read_prefix("metrics.");
  s.mark_read_prefix("optimizer.");
  s.mark_read_prefix("lr_scheduler.");
  s.get("training.steps");
  s.get("training.dataset");
  s.get("training.dataset_path");
  return d;
}

}  // namespace parplan::tools
