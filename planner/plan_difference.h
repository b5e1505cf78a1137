// Where two estimated plans differ: the step-breakdown parts whose times differ most, each
// with the plan keys behind that part (the cost model's inputs for it) whose values differ.
// Explains a plan comparison in numbers; tools/report/why.h words it. Tested in
// tests/planner/plan_difference_test.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/job.h"
#include "cost_models/step_model.h"

namespace parplan::planner {

struct KeyDifference {
  std::string key;  // a plan key ("pp", "recompute"), "micro-batches" or the training "method"
  std::string value_a;
  std::string value_b;
};

struct PartDifference {
  std::string part;                 // a StepBreakdown name: "compute", "pipeline_bubble", ...
  double a_minus_b_s = 0;           // the part's time in plan a minus in plan b
  std::vector<KeyDifference> keys;  // keys behind the part whose values differ
};

// Parts differing by at least 0.5% of the longer step, largest difference first, at most
// `max_parts` of them. `job_a` and `job_b` carry the plans that `a` and `b` estimate.
std::vector<PartDifference> largest_part_differences(const Job& job_a, const cost::StepEstimate& a,
                                                     const Job& job_b, const cost::StepEstimate& b,
                                                     std::size_t max_parts = 3);

}  // namespace parplan::planner
