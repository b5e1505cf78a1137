// The validation error model: what the cost model got wrong on every public validation run,
// and where those runs lie (framework, GPU, features, scale, plan keys). It is generated from
// tests/data/published_runs.json and tests/data/benchmark_tables/*.json by
// `parplan validate --write-error-model` (tools/error_model.sh) into
// planner/data/error_model.json, embedded into the binary at configure time, and read here.
// Prediction intervals (prediction_interval.h), extrapolations (extrapolation.h) and the
// planner's default memory headroom come from it (docs/intervals.md).
// Tested by tests/planner/error_model_test.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/json_input.h"

namespace parplan::planner {

// Where a job lies, in the terms its validation runs are compared by.
struct RunFeatures {
  std::string framework;     // the job's spelling ("megatron-core")
  std::string family;        // framework family: "megatron", "deepspeed", "torchtitan", ...
  std::string gpu;           // the GPU's name ("H100 SXM")
  std::string architecture;  // tensor-core generation ("hopper")
  int64_t gpus = 0;
  bool moe = false;
  bool sharded = false;  // ZeRO-3 / FSDP: parameters sharded over data parallelism
  bool cp = false;       // context parallelism
  // Every feature the job uses, by name (moe, cp, fsdp/zero3, fp8, vpp, ep, lora, sft, ...).
  std::vector<std::string> features;
  // Plan key values as strings ("tp" -> "8", "recompute" -> "selective").
  std::map<std::string, std::string> plan;
};

RunFeatures run_features(const Job& job);

// One validation run: its features and the log residuals log(predicted / reference).
struct ErrorModelRun {
  std::string id;
  std::string source_family;  // the id before its first '_' (one publication or table)
  RunFeatures features;
  double step_time_log_residual = 0;
  std::optional<double> memory_log_residual;
};

struct ErrorModel {
  std::vector<std::string> sources;  // the validation files it was built from
  std::vector<ErrorModelRun> runs;
};

Json error_model_to_json(const ErrorModel& model);
// Throws InputError naming `file` and the key path for a malformed model.
ErrorModel error_model_from_json(const Json& root, const std::string& file);

// The model embedded at configure time (planner/data/error_model.json); parsed once.
const ErrorModel& embedded_error_model();

}  // namespace parplan::planner
