// JSON and text renderings of a step estimate, shared by simulate, plan, compare and
// validate (simulate's documented keys, docs/commands.md#simulate: step_time_s, tokens_per_s,
// tokens_per_s_per_gpu, model_tflops_per_gpu, mfu, peak_memory_gib, fits, breakdown).
#pragma once

#include <string>

#include "core/job.h"
#include "core/json_input.h"
#include "cost_models/step_model.h"

namespace parplan::tools {

Json estimate_to_json(const Job& job, const cost::StepEstimate& estimate);
Json memory_to_json(const cost::MemoryEstimate& memory);
Json breakdown_to_json(const cost::StepBreakdown& breakdown);

// A multi-line human summary: throughput, memory, and where the time goes.
std::string estimate_to_text(const Job& job, const cost::StepEstimate& estimate);

}  // namespace parplan::tools
