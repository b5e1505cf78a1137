// How far to trust one prediction, from the validation error model embedded in the binary
// (planner/error_model.h): the 80% intervals of step time and peak memory
// (planner/prediction_interval.h) and every way the job lies outside validated experience
// (planner/extrapolation.h), as JSON keys (step_time_interval_s, peak_memory_interval_gib,
// interval_basis, extrapolations; docs/commands.md) and text lines. Shared by simulate, plan,
// compare and the reports. Tested in tests/tools/cli_test.cpp and the report goldens.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/json_input.h"
#include "cost_models/step_model.h"
#include "planner/extrapolation.h"
#include "planner/prediction_interval.h"

namespace parplan::tools {

Json prediction_trust_to_json(const Job& job, const cost::StepEstimate& estimate);

// "80% interval  step 1.23-1.45 s, peak memory 50.1-58.0 GiB (from 31 runs: ...)" and
// "extrapolates  ..." or "inside validated experience" lines, each ending in a newline.
std::string prediction_trust_to_text(const Job& job, const cost::StepEstimate& estimate);

// Sentences about `who` ("the winner") for the reports: its intervals, where its prediction
// lies outside them (outside_interval_note), and what it extrapolates or that it lies inside
// validated experience.
std::vector<std::string> prediction_trust_sentences(const Job& job,
                                                    const cost::StepEstimate& estimate,
                                                    const std::string& who);

// Empty when `value` lies inside `interval` (or there is none); otherwise "the <what>
// prediction lies below its interval: at least nine in ten comparable validation runs measured
// more than predicted" (above: less).
std::string outside_interval_note(double value,
                                  const std::optional<planner::PredictionInterval>& interval,
                                  const char* what);

// The extrapolations' messages joined with "; " (empty when inside).
std::string extrapolations_line(const std::vector<planner::Extrapolation>& list);

}  // namespace parplan::tools
