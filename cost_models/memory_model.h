// Per-rank device memory of a plan: weights, gradients and optimizer state (sharded by the
// ZeRO stage), activations of the micro-batches the pipeline schedule keeps in flight, the
// embedding and output layer with the logits and loss buffers on the first/last stage, and a
// stated framework allowance. The busiest rank is the plan's peak.
// Tested in tests/cost_models/activation_memory_test.cpp and mixed_precision_memory_test.cpp
// (closed forms) and against the published memory figures in tests/data/published_runs.json.
#pragma once

#include <string>
#include <vector>

#include "core/job.h"
#include "cost_models/activation_memory.h"
#include "cost_models/framework_traits.h"

namespace parplan::cost {

struct StageMemory {
  int64_t stage = 0;
  double params = 0;  // parameters held by one GPU of this stage (before ZeRO sharding)
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;    // stored activations of the in-flight micro-batches
  double transient_bytes = 0;      // recompute/backward working set, gathered FSDP layers
  double logits_bytes = 0;         // output logits and loss buffers (last stage)
  double workspace_bytes = 0;      // framework allowance (CUDA context, NCCL, cuBLAS)
  double fragmentation_bytes = 0;  // caching-allocator reserve
  int64_t in_flight_chunks = 0;    // micro-batch model chunks held at the peak
  double total_bytes() const;
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;  // one per pipeline stage
  int64_t peak_stage = 0;
  double peak_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
};

MemoryEstimate estimate_memory(const Job& job);
MemoryEstimate estimate_memory(const Job& job, const FrameworkTraits& traits);

// The activation model's options for a job's plan (cost_models/activation_memory.h).
ActivationOptions activation_options(const Job& job, const FrameworkTraits& traits);

// The layers whose activations go to host memory (ParallelPlan::offload_activation_layers:
// the model's first layers, all on the one pipeline stage offloading allows), as dense and MoE.
struct OffloadedLayers {
  int64_t dense = 0;
  int64_t moe = 0;
};
OffloadedLayers offloaded_layers(const Job& job);

// Dropout is part of GPT-style models (LayerNorm); Llama-style (RMSNorm) models train
// without it (Touvron et al. 2023; Megatron-Core Llama recipes set dropout 0).
bool model_uses_dropout(const ModelSpec& model);

}  // namespace parplan::cost
