// The published-runs validation set (format: docs/validation.md): each
// entry a job plus its measured step time (and memory for some). Predicts every run and
// summarises the errors (MAPE, median, p90) for the whole set and for the core subset
// (runs without MoE, context parallelism or FSDP, the time-model issue's gate). An entry that
// cannot be read or predicted (a node preset we lack, a value the job file does not allow) is
// set aside with its error message instead of stopping the whole set.
// Tested by tests/tools/validate_test.cpp (thresholds) on tests/data/published_runs.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "cost_models/step_model.h"

namespace parplan::tools {

struct PublishedRun {
  std::size_t index = 0;  // position in the file
  std::string id;
  Job job;
  double reference_step_time_s = 0;
  std::optional<double> reference_memory_gib;
  bool uncertain = false;
  bool core = false;  // no MoE, no context parallelism, no FSDP (zero_stage 3)
  // Keys of the entry (outside its job) that the format does not define: ignored, reported.
  std::vector<std::string> ignored_keys;
};

// An entry left out of the set: where it is, its id if readable, and the error (file, key
// path, what was found, what is allowed).
struct RejectedRun {
  std::size_t index = 0;
  std::string id;
  std::string error;
};

struct PublishedRuns {
  std::vector<PublishedRun> runs;
  std::vector<RejectedRun> rejected;
};

struct RunResult {
  const PublishedRun* run = nullptr;
  cost::StepEstimate estimate;
  double step_error = 0;  // (predicted - reference) / reference
  std::optional<double> memory_error;
};

struct ErrorStats {
  int count = 0;
  double mape = 0;
  double median_ape = 0;
  double p90_ape = 0;
  double max_ape = 0;
};

// One entry of a published-runs file (`where` is its position, "[3]"; `base` the folder that
// relative paths resolve against). Throws the entry's first error.
PublishedRun parse_published_run(const Json& entry, std::size_t index, const std::string& path,
                                 const std::string& where, const std::string& base);

// Throws for a file that is missing or not a JSON array; rejects single bad entries.
PublishedRuns load_published_runs(const std::string& path);
// Runs whose prediction fails (a plan the model cannot place) move to `rejected`.
std::vector<RunResult> predict_runs(const std::vector<PublishedRun>& runs,
                                    std::vector<RejectedRun>& rejected);
ErrorStats error_stats(std::vector<double> relative_errors);

}  // namespace parplan::tools
