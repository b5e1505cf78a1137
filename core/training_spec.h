// TrainingSpec: what one optimizer step processes (docs/job_file.md#training).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/cluster_spec.h"
#include "core/json_input.h"

namespace parplan {

enum class TrainingMethod { Pretrain, Sft, Lora };
const char* to_string(TrainingMethod method);

// Mean time between unexpected job interruptions per GPU, hours: Llama 3 report (Dubey et al.
// 2024, arXiv 2407.21783, §3.3.4): 419 unexpected interruptions in a 54-day snapshot on
// 16,384 H100 GPUs, i.e. 16384 * 54 * 24 / 419 = 50,677 GPU-hours per interruption.
inline constexpr double kDefaultGpuMtbfHours = 16384.0 * 54.0 * 24.0 / 419.0;

// The whole run beyond one step: how many tokens, at what price, with what failure rate,
// checkpoint storage and power (docs/job_file.md#the-run-time-to-train-and-cost;
// cost_models/time_to_train.h). Without total_tokens none of it is used.
struct RunSpec {
  std::optional<double> total_tokens;  // tokens to train
  std::optional<double> gpu_hour_usd;  // price of one GPU-hour
  double gpu_mtbf_hours = kDefaultGpuMtbfHours;
  // Write bandwidth to the checkpoint storage per node, GB/s. Stated assumption: the Llama 3
  // cluster's storage sustains 2 TB/s (report §3.3.1, Tectonic) for 2,048 nodes, ~1 GB/s each.
  double checkpoint_bandwidth_gbps = 1.0;
  // Detection, rescheduling, restart and checkpoint load after a failure, seconds. Stated
  // assumption (10 minutes): the Llama 3 report §3.3.4 names fast diagnosis and restart
  // tooling without a figure.
  double restart_overhead_s = 600;
  // Power usage effectiveness of the data centre. Stated assumption: the Uptime Institute
  // 2023 survey average is 1.58; hyperscale AI halls report 1.1-1.2 (Meta 2023 sustainability
  // report: 1.08-1.10); 1.2 sits between.
  double pue = 1.2;
  std::optional<double> gpu_power_w;      // replaces the node's gpu.tdp_w
  std::optional<double> node_overhead_w;  // replaces the node's node_overhead_w
};

struct TrainingSpec {
  int64_t global_batch_size = 0;  // sequences per optimizer step
  int64_t seq_length = 0;
  Precision precision = Precision::Bf16;
  TrainingMethod method = TrainingMethod::Pretrain;
  int64_t lora_rank = 16;
  // Megatron-Core / NeMo grad_reduce_in_fp32: false keeps the gradient buffer and its
  // reduction in the 16-bit training dtype (NeMo and Megatron-Bridge performance recipes);
  // unset: the framework's own (fp32 for Megatron's 16-bit mixed precision).
  std::optional<bool> grad_reduce_in_fp32;
  // PyTorch's CUDA caching allocator with expandable segments
  // (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): it maps physical pages into one
  // growing virtual segment instead of caching fixed segments, so the memory it reserves
  // follows what is allocated and the fragmentation reserve of the memory model
  // (FrameworkTraits::allocator_fragmentation) goes; cost_models/memory_model.cpp. Unset:
  // false.
  std::optional<bool> expandable_segments;
  // The framework compiles its model with torch.compile (torchtitan's [compile] enable, its
  // --training.compile before v0.2): Inductor fuses the elementwise and reduction chains of
  // norms, rotary embedding and activations into single kernels, where eager PyTorch runs
  // them op by op (FrameworkTraits::norm_traffic_factor and its siblings). Unset: false.
  std::optional<bool> torch_compile;
  RunSpec run;

  // Whether the model runs compiled (torch_compile; unset is eager).
  bool compiles_model() const { return torch_compile.value_or(false); }

  double tokens_per_step() const {
    return static_cast<double>(global_batch_size) * static_cast<double>(seq_length);
  }
};

TrainingSpec parse_training_spec(const Json& object, const std::string& file,
                                 const std::string& path);
Json training_spec_to_json(const TrainingSpec& training);

}  // namespace parplan
