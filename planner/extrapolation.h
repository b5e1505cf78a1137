// Every way a job lies outside validated experience, from the validation error model
// (error_model.h): a GPU or framework with no validation run, a feature (moe, cp, fsdp/zero3,
// fp8, vpp, ep, lora, ...) or combination of features no run of its framework family used, a
// GPU count above the largest validated one, a plan key value its framework family never
// published, a framework family none of whose runs measured its peak memory. Empty when the
// job is inside. docs/intervals.md; tested by
// tests/planner/prediction_interval_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "planner/error_model.h"

namespace parplan::planner {

struct Extrapolation {
  std::string kind;  // "gpu", "framework", "feature", "feature-combination", "scale", "plan-key",
                     // "memory"
  std::string message;
};

std::vector<Extrapolation> find_extrapolations(const ErrorModel& model, const RunFeatures& job);

}  // namespace parplan::planner
