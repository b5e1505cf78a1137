// Pipeline schedules as data: for each pipeline stage, the ordered list of actions it runs in
// one optimizer step. The simulator (cost_models/pipeline_sim) times these lists; the executor
// (executor/pipeline_runner) executes them. One function, two consumers.
//
// Model chunks: with vpp virtual stages per rank, chunk c of stage s is global virtual stage
// v = c*pp + s; a micro-batch's forward visits v = 0, 1, ..., pp*vpp-1 and its backward
// returns in reverse. Counts follow Megatron-Core's schedules.py
// (get_pp_rank_microbatches, get_schedule_table); ZB-H1 follows Qi et al. 2023 ("Zero Bubble
// Pipeline Parallelism", §3.1). Tested in tests/core/schedule_test.cpp (every action once,
// dependencies respected, Megatron's warm-up counts).
#pragma once

#include <cstdint>
#include <vector>

#include "core/parallel_plan.h"

namespace parplan {

enum class PipeOp {
  Forward,
  Backward,        // input and weight gradients together
  BackwardInput,   // zero-bubble split: gradient w.r.t. the input only
  BackwardWeight,  // zero-bubble split: gradient w.r.t. the weights only
};

struct PipeAction {
  PipeOp op;
  int64_t micro_batch;
  int64_t chunk;  // model chunk on this rank, 0..vpp-1
};

struct PipelineShape {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int64_t pp = 1;
  int64_t vpp = 1;
  int64_t num_micro_batches = 1;
};

// The pipeline a plan runs for a global batch: its schedule, pp, vpp and micro-batches per step.
PipelineShape pipeline_shape(const ParallelPlan& plan, int64_t global_batch_size);

// The actions of one stage, in execution order.
std::vector<PipeAction> stage_schedule(const PipelineShape& shape, int64_t stage);

// All stages' lists, index = stage.
std::vector<std::vector<PipeAction>> pipeline_schedule(const PipelineShape& shape);

// Forward passes a stage runs before its first backward (1F1B warm-up; Megatron's count).
int64_t warmup_forwards(const PipelineShape& shape, int64_t stage);

// Micro-batches whose activations a stage holds at its peak, in units of one micro-batch of
// one model chunk (for memory): 1F1B stage s holds pp - s; GPipe holds all.
int64_t peak_in_flight_chunks(const PipelineShape& shape, int64_t stage);

const char* to_string(PipeOp op);

}  // namespace parplan
