// The measured runs `parplan calibrate` fits to (docs/calibration.md): a published-runs file
// (a JSON array of {id, job, reference: {step_time_s, memory_gib?}}, docs/validation.md) or
// the JSON object `parplan validate --run --json` writes (its "runs", each with its id, job
// and measured figures; oversubscribed runs are left out: time-shared cores measure the
// machine's scheduler, not the model). Unlike `validate --published`, any bad entry stops the
// load with an error naming it (file, [index] and key path): a calibration must not be fitted
// to part of what was meant. Tested in tests/tools/calibrate_cli_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "cost_models/calibration_fit.h"

namespace parplan::tools {

struct CalibrationRuns {
  std::string path;
  std::string hash;  // "fnv1a64:<16 hex digits>" of the file's bytes
  std::vector<cost::CalibrationSample> samples;
  std::vector<std::string> node_types;  // of the runs kept (one)
  std::size_t left_out = 0;             // oversubscribed or on another node type (--node)
};

// `node` keeps only the runs on that node type; empty: the runs must all share one.
CalibrationRuns load_calibration_runs(const std::string& path, const std::string& node);

}  // namespace parplan::tools
