// Golden-file comparison with numeric tolerance. Text is split into numbers and the rest:
// the rest must match exactly, numbers within a relative tolerance (or one unit of their
// last printed decimal, so that a rounding flip of a printed value is not a failure, and an
// absolute 1e-12 for values that are zero up to rounding noise). JSON
// is compared structurally, strings with the same rule.
//
// Regenerating: PARPLAN_UPDATE_GOLDENS=1 ctest -R report_golden (or run the test binary
// with that variable set). The test then rewrites the golden files and SKIPS with a message;
// review `git diff tests/data/golden` and commit. Without the variable goldens never change.
#pragma once

#include <string>

#include "core/json_input.h"

namespace parplan::testing {

inline constexpr double kGoldenRelativeTolerance = 1e-6;

// Empty when equal within tolerance, else a description of the first difference.
std::string compare_text(const std::string& expected, const std::string& actual,
                         double relative_tolerance = kGoldenRelativeTolerance);
std::string compare_json(const Json& expected, const Json& actual,
                         double relative_tolerance = kGoldenRelativeTolerance,
                         const std::string& path = "");

bool update_goldens_requested();

}  // namespace parplan::testing
