// A torchtitan job-config TOML section. Keys follow pytorch/torchtitan
// torchtitan/config/job_config.py (checked at commit 6404b932421f); pipeline schedule names
// are torch.distributed.pipelining's (get_schedule_class).
#include "tools/export/launch_settings.h"

namespace parplan::tools {

namespace {

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

void parallelism(const Job& job, Toml& t) {
  const ParallelPlan& p = job.plan;
  t.section("parallelism");
  const int64_t shard = p.zero_shard_size > 0 ? p.zero_shard_size : p.dp;
  switch (p.zero_stage) {
    case 0:
    case 1:
      if (p.zero_stage == 1) {
        t.comment("zero_stage 1: torchtitan has no optimizer-only sharding; this is plain DDP");
      }
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
        t.str("fsdp_reshard_after_forward", "default");
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
        if (p.vpp > 1) {
          t.str("pipeline_parallel_schedule", "InterleavedZeroBubble");
        } else {
          t.comment(
              "schedule zero-bubble with one stage per rank (ZB-H1): not offered; "
              "zero-bubble schedules need several stages per rank");
        }
        break;
      case ScheduleKind::DualPipe:
        t.comment(
            "schedule dualpipe: DualPipeV needs two stages per rank in a V layout; not "
            "set");
        break;
    }
    t.set("pipeline_parallel_microbatch_size", p.micro_batch_size);
    if (per_chunk > 0 && p.vpp > 1) {
      t.set("pipeline_parallel_layers_per_stage", per_chunk);
    } else if (per_chunk == 0) {
      t.comment("uneven layers per stage: set module_fqns_per_model_part by hand");
    }
  }
  if (job.model.moe) t.set("expert_parallel_degree", p.ep);
  if (p.order != "tp-cp-ep-dp-pp") {
    t.comment("plan.order " + p.order + ": torchtitan builds its own device mesh");
  }
}

}  // namespace

std::string export_torchtitan(const Job& job) {
  std::string out = launch::header(job, "torchtitan job config (TOML)",
                                   "pytorch/torchtitan torchtitan/config/job_config.py; '#' "
                                   "lines name what has no key");
  Toml t;
  t.section("model");
  t.comment("name and flavor: torchtitan's model for " + job.model.name +
            " (parplan does not map presets to flavors)");
  if (job.training.precision == Precision::Fp8) t.set("converters", "[\"float8\"]");
  training(job, t);
  parallelism(job, t);
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
