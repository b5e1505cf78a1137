// Which plans a training framework can run, for the planner's default space: the parallel
// dimensions, ZeRO stages, schedules and recomputation modes each framework implements
// (documented in README, "Frameworks"). `simulate` still predicts any plan the user gives;
// the planner only proposes plans the framework can launch.
// Tested in tests/planner/plan_space_test.cpp.
#pragma once

#include <optional>
#include <string>

#include "core/framework.h"
#include "core/parallel_plan.h"

namespace parplan::planner {

// nullopt when the framework supports the plan, else a short reason tag
// ("framework-no-cp", "framework-zero-stage", ...).
std::optional<std::string> unsupported_by_framework(Framework framework, const ParallelPlan& plan);

}  // namespace parplan::planner
