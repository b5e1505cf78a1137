// Discrete-event simulation of one optimizer step's pipeline schedule: each stage runs its
// action list from core/schedule.h in order; an action starts when the stage is free and its
// input has arrived (the previous virtual stage's forward, or the next one's backward, plus
// the point-to-point transfer time). Bubbles and uneven stages come out of the simulation.
// Tested in tests/cost_models/pipeline_sim_test.cpp: uniform 1F1B bubble = (p-1)/(m+p-1),
// interleaved bubble = (p-1)/(v*m + p-1) (Narayanan et al. 2021 §2.2).
#pragma once

#include <cstdint>
#include <vector>

#include "core/schedule.h"

namespace parplan::cost {

struct StageTimes {
  // Per model chunk on this stage (index = chunk, 0..vpp-1), seconds for one micro-batch.
  std::vector<double> forward;
  std::vector<double> backward;         // input + weight gradients (and recomputation)
  std::vector<double> backward_weight;  // part of `backward` that zero-bubble defers (W)
};

struct PipelineInput {
  PipelineShape shape;
  std::vector<StageTimes> stages;  // one per pipeline stage
  double p2p_s = 0;                // activation / gradient transfer between adjacent stages
  // The sending stage waits for its own transfer before its next action (Megatron-LM before
  // Megatron-Core: batch_isend_irecv, req.wait(), torch.cuda.synchronize(); DeepSpeed's
  // pipeline engine: blocking send/recv; Megatron-Core without virtual stages, where it turns
  // overlap_p2p_comm off). Applies to 1F1B, interleaved and GPipe, whose
  // chunk c on stage s is virtual stage c * pp + s.
  bool p2p_blocks_sender = false;
  bool record_events = false;
};

struct PipelineEvent {
  int64_t stage;
  PipeOp op;
  int64_t micro_batch;
  int64_t chunk;
  double start_s;
  double end_s;
};

struct PipelineResult {
  double makespan_s = 0;
  std::vector<double> busy_s;    // per stage: time spent computing
  std::vector<double> finish_s;  // per stage: end of its last action
  // Per stage and chunk: start of the last backward of that chunk (its gradients are
  // complete at the end of that action; reduction can overlap from here).
  std::vector<std::vector<double>> last_backward_start_s;
  std::vector<std::vector<double>> last_backward_end_s;
  std::vector<PipelineEvent> events;  // when record_events
};

PipelineResult simulate_pipeline(const PipelineInput& input);

// The same result for many micro-batches at a fraction of the cost: after the warm-up the
// schedule is periodic (a max-plus linear system), so the step is simulated with two smaller
// micro-batch counts of the same residue modulo pp and extended linearly by the measured
// period. Exact once both counts are in the steady state; tested against simulate_pipeline.
// Events are only recorded by the full simulation.
PipelineResult simulate_pipeline_fast(const PipelineInput& input);

}  // namespace parplan::cost
