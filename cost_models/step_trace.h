// The predicted step as a Chrome trace (core/chrome_trace.h, the format `parplan run`
// writes for a measured step): one track per pipeline stage with its forward and backward
// passes, and one communication track per stage with the exposed collectives of each pass,
// the pipeline transfers and the data-parallel reduction, for one data-parallel replica.
// Tested in tests/cost_models/step_trace_test.cpp.
#pragma once

#include <vector>

#include "core/chrome_trace.h"
#include "core/job.h"
#include "cost_models/step_model.h"

namespace parplan::cost {

// `estimate` must come from estimate_step with record_pipeline_events.
std::vector<TraceEvent> step_trace_events(const Job& job, const StepEstimate& estimate);

}  // namespace parplan::cost
