// Which plans a training framework can run, for the planner's default space: the rejection
// tag of a plan its description's PlannerSupport (core/frameworks/planner_support.h, values in
// core/frameworks/<name>.cpp) does not allow. `simulate` still predicts any plan the user
// gives; the planner only proposes plans the framework can launch.
// Tested in tests/planner/framework_support_test.cpp and plan_space_test.cpp.
#pragma once

#include <optional>
#include <string_view>

#include "core/framework.h"
#include "core/parallel_plan.h"

namespace parplan::planner {

// nullopt when the framework supports the plan (of a MoE model when `moe_model`), else a short
// reason tag ("framework-no-cp", "framework-zero-stage", ...): a view of a string literal, the
// same pointer for the same tag. O(1), allocates nothing (the planner asks for every plan).
std::optional<std::string_view> unsupported_by_framework(Framework framework,
                                                         const ParallelPlan& plan,
                                                         bool moe_model = false);

}  // namespace parplan::planner
