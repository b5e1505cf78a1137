#include "core/training_spec.h"

namespace parplan {

const char* to_string(TrainingMethod method) {
  switch (method) {
    case TrainingMethod::Sft:
      return "sft";
    case TrainingMethod::Lora:
      return "lora";
    case TrainingMethod::Pretrain:
      break;
  }
  return "pretrain";
}

namespace {

// The run keys of the training object (docs/job_file.md#the-run-time-to-train-and-cost). Every
// key but total_tokens only matters with it: without it, giving one is an error, not a no-op.
RunSpec parse_run_keys(JsonReader& in) {
  RunSpec run;
  run.total_tokens = in.optional_number("total_tokens", 1, 1e18);
  run.gpu_hour_usd = in.optional_number("gpu_hour_usd", 0, 1e6);
  run.gpu_mtbf_hours = in.number_or("gpu_mtbf_hours", run.gpu_mtbf_hours, 1e-3, 1e12);
  run.checkpoint_bandwidth_gbps =
      in.number_or("checkpoint_bandwidth_gbps", run.checkpoint_bandwidth_gbps, 1e-6, 1e6);
  run.restart_overhead_s = in.number_or("restart_overhead_s", run.restart_overhead_s, 0, 1e9);
  run.pue = in.number_or("pue", run.pue, 1.0, 10.0);
  run.gpu_power_w = in.optional_number("gpu_power_w", 1, 1e5);
  run.node_overhead_w = in.optional_number("node_overhead_w", 0, 1e7);
  if (!run.total_tokens) {
    for (const char* key : {"gpu_hour_usd", "gpu_mtbf_hours", "checkpoint_bandwidth_gbps",
                            "restart_overhead_s", "pue", "gpu_power_w", "node_overhead_w"}) {
      if (const Json* value = in.find(key); value != nullptr && !value->is_null()) {
        in.fail(key, describe_json_value(*value) + " without training.total_tokens",
                "this key together with total_tokens (the run's time and cost need the tokens "
                "to train)");
      }
    }
  }
  return run;
}

}  // namespace

TrainingSpec parse_training_spec(const Json& object, const std::string& file,
                                 const std::string& path) {
  JsonReader in(object, file, path);
  TrainingSpec t;
  t.global_batch_size = in.require_int("global_batch_size", 1, 1'000'000'000);
  t.seq_length = in.require_int("seq_length", 1, 100'000'000);
  t.precision =
      *parse_precision(in.choice_or("precision", "bf16", {"fp32", "fp16", "bf16", "fp8"}));
  const std::string method = in.choice_or("method", "pretrain", {"pretrain", "sft", "lora"});
  t.method = method == "sft"    ? TrainingMethod::Sft
             : method == "lora" ? TrainingMethod::Lora
                                : TrainingMethod::Pretrain;
  t.lora_rank = in.int_or("lora_rank", 16, 1, 1'000'000);
  t.grad_reduce_in_fp32 = in.optional_bool("grad_reduce_in_fp32");
  t.expandable_segments = in.optional_bool("expandable_segments");
  t.torch_compile = in.optional_bool("torch_compile");
  t.run = parse_run_keys(in);
  in.finish();
  return t;
}

Json training_spec_to_json(const TrainingSpec& t) {
  Json out = {{"global_batch_size", t.global_batch_size},
              {"seq_length", t.seq_length},
              {"precision", to_string(t.precision)},
              {"method", to_string(t.method)}};
  if (t.method == TrainingMethod::Lora) out["lora_rank"] = t.lora_rank;
  if (t.grad_reduce_in_fp32) out["grad_reduce_in_fp32"] = *t.grad_reduce_in_fp32;
  if (t.expandable_segments) out["expandable_segments"] = *t.expandable_segments;
  if (t.torch_compile) out["torch_compile"] = *t.torch_compile;
  // The run keys only when the job has them: jobs without keep their JSON unchanged.
  if (t.run.total_tokens) {
    out["total_tokens"] = *t.run.total_tokens;
    if (t.run.gpu_hour_usd) out["gpu_hour_usd"] = *t.run.gpu_hour_usd;
    out["gpu_mtbf_hours"] = t.run.gpu_mtbf_hours;
    out["checkpoint_bandwidth_gbps"] = t.run.checkpoint_bandwidth_gbps;
    out["restart_overhead_s"] = t.run.restart_overhead_s;
    out["pue"] = t.run.pue;
    if (t.run.gpu_power_w) out["gpu_power_w"] = *t.run.gpu_power_w;
    if (t.run.node_overhead_w) out["node_overhead_w"] = *t.run.node_overhead_w;
  }
  return out;
}

}  // namespace parplan
