// JSON and text renderings of a step estimate, shared by simulate, plan, compare and
// validate (simulate's documented keys, docs/commands.md#simulate: step_time_s, tokens_per_s,
// tokens_per_s_per_gpu, model_tflops_per_gpu, mfu, peak_memory_gib, fits, breakdown).
#pragma once

#include <string>

#include "core/job.h"
#include "core/json_input.h"
#include "cost_models/step_model.h"
#include "cost_models/time_to_train.h"

namespace parplan::tools {

Json estimate_to_json(const Job& job, const cost::StepEstimate& estimate);
Json memory_to_json(const cost::MemoryEstimate& memory);
Json breakdown_to_json(const cost::StepBreakdown& breakdown);

// One table cell: "tp8 pp4 dp2 cp2 vpp5 mbs1 sp norc z1".
std::string plan_cell(const ParallelPlan& plan);

// The run's keys (time_to_train_days, gpu_hours, energy_mwh, cost_usd, goodput,
// cluster_mtbf_s, checkpoint_bytes, checkpoint_write_s, checkpoint_interval_s, ...); the days,
// GPU-hours, energy and cost are null when failures leave no time to train.
Json time_to_train_to_json(const cost::TimeToTrain& run);
// Three lines: days, GPU-hours, energy and cost; goodput; failures and checkpoints.
std::string time_to_train_to_text(const cost::TimeToTrain& run);

// A multi-line human summary: throughput, memory, and where the time goes.
std::string estimate_to_text(const Job& job, const cost::StepEstimate& estimate);

}  // namespace parplan::tools
