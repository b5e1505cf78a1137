// The registry of training frameworks: every FrameworkDescription, listed once
// (core/frameworks/registry.cpp), looked up by enum value in O(1) (the planner asks per plan).
// Tested in tests/core/frameworks_test.cpp.
//
// To add a framework:
//  1. Add its enum value to `Framework` in core/framework.h, before `Parplan` (which stays
//     last: kFrameworkCount counts from it).
//  2. Write core/frameworks/<name>.cpp, defining `extern constexpr FrameworkDescription k<Name>`
//     in namespace parplan::frameworks (copy the closest framework's file: names, summary,
//     sources, plan defaults, planner support, cost traits with their sources, export
//     formats; core/frameworks/mixed_precision.h has the shared layouts), and add the file
//     to core/CMakeLists.txt.
//  3. In core/frameworks/registry.cpp, declare it and add it to kRegistry at its enum value's
//     position.
//  4. Describe it in docs/frameworks.md (its section and the two tables).
//  5. Build and run `ctest -L unit`: tests/core/frameworks_test.cpp (registry, names and
//     aliases, bytes per parameter), tests/planner/framework_support_test.cpp (the planner
//     against the description, plan defaults it can propose) and tests/tools/export_test.cpp
//     (export formats); add a test of a property the new framework has that the others lack.
#pragma once

#include <span>

#include "core/framework.h"
#include "core/frameworks/framework_description.h"

namespace parplan {

// The description of `framework`: a reference into a static table, no allocation.
const FrameworkDescription& framework_info(Framework framework);

// Every framework, in enum order.
std::span<const FrameworkDescription* const> all_frameworks();

}  // namespace parplan
