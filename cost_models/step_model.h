// The step-time model: per-stage micro-batch times from layer_cost, the pipeline schedule
// simulated by pipeline_sim, then the data-parallel gradient reduction (overlapped with the
// last backward passes where the framework does so), ZeRO/FSDP parameter gathers, and the
// optimizer step (data_parallel_update.h). The breakdown sums to the step time. Tested in
// tests/cost_models/step_model_test.cpp (invariants: tp=1 => no tp time, pp=1 => no bubble,
// total >= compute; breakdown sums to the total) and by `parplan validate --published`.
#pragma once

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/job.h"
#include "cost_models/layer_cost.h"
#include "cost_models/memory_model.h"
#include "cost_models/pipeline_sim.h"

namespace parplan::cost {

// Named parts of the step; they sum to step_time_s. `overlapped` notes what was hidden.
struct StepBreakdown {
  double compute = 0;    // forward + backward kernels of the critical stage
  double recompute = 0;  // recomputed forward work
  double tp_comm = 0;    // exposed tensor-parallel collectives
  double cp_comm = 0;    // exposed context-parallel exchange
  double ep_comm = 0;    // exposed expert all-to-all
  double pp_bubble = 0;  // pipeline idle time (warm-up, cool-down, waits on p2p)
  double dp_comm = 0;    // exposed gradient reduction (and parameter all-gather)
  double fsdp_comm = 0;  // exposed ZeRO-3/FSDP parameter gathers
  double optimizer = 0;  // optimizer step
  // Per-step framework overhead fitted to measured runs (Calibration::step_overhead_s);
  // named only when not zero, so that uncalibrated outputs keep their keys.
  double step_overhead = 0;
  // Calibrated host overhead of the critical stage's micro-batches
  // (Calibration::micro_batch_overhead_s); named only when not zero.
  double micro_batch_overhead = 0;
  double total() const;
  std::vector<std::pair<std::string, double>> named() const;
};

struct StepEstimate {
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops = 0;  // per step, all GPUs, no recomputation
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  double hardware_flops = 0;  // executed, with recomputation
  StepBreakdown breakdown;
  // Hidden by overlap with compute (for the explanation), seconds.
  double hidden_dp_comm = 0;
  double hidden_tp_comm = 0;
  int64_t critical_stage = 0;
  int64_t num_micro_batches = 0;
  double p2p_s = 0;
  MemoryEstimate memory;
  PipelineResult pipeline;  // with events when requested
  // One micro-batch of each model chunk on each stage (index [stage][chunk]), seconds by
  // kind; filled when pipeline events are recorded (for traces).
  struct ChunkParts {
    PassTime forward;
    PassTime backward;  // recomputation included
    double recompute = 0;
    double fsdp_forward = 0;
    double fsdp_backward = 0;
  };
  std::vector<std::vector<ChunkParts>> chunk_parts;
  std::vector<double> dp_exposed_s;  // per stage, after its last backward
  std::vector<double> optimizer_s;   // per stage
};

struct StepOptions {
  bool record_pipeline_events = false;
};

StepEstimate estimate_step(const Job& job, const StepOptions& options = {});

// The per-layer times of a plan depend only on these plan keys; the planner computes them once
// per key and reuses them for every plan that shares it.
struct LayerTimes {
  LayerTime dense;
  LayerTime moe;
  LayerTime embedding;
  LayerTime head;
};
// The plan keys the layer times depend on: tp, cp, ep, expert tp, micro-batch size, sequence
// parallelism, recompute (with its modules), the overlap of the expert all-to-alls that is in
// the layer times (layer_cost.cpp: 0 none, 1 DualPipe, 2 moe_a2a_overlap) and the plan's MoE
// dispatcher ("auto" resolves from the keys before it).
using LayerTimesKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool, int, int, int>;
LayerTimesKey layer_times_key(const ParallelPlan& plan);
LayerTimes compute_layer_times(const Job& job);
StepEstimate estimate_step(const Job& job, const LayerTimes& layers,
                           const StepOptions& options = {});

// Work of the busiest pipeline stage (m micro-batches of forward + backward), a lower bound
// of the step time that needs no pipeline simulation.
double compute_lower_bound_s(const Job& job, const LayerTimes& layers);

}  // namespace parplan::cost
