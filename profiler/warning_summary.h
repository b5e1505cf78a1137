// Collapses the profile's warnings for the summary `parplan profile` prints: measurements
// that ended the same way ("GEMM fp32 ...: budget ended first" for 120 shapes) become one line
// with their count and an example; the profile file keeps every warning. Tested in
// tests/profiler/warning_summary_test.cpp.
#pragma once

#include <string>
#include <vector>

namespace parplan::profiler {

// One line per kind of warning, in order of first appearance: the warning itself when it is
// alone of its kind, else "N x KIND (e.g. FIRST)". The kind is the words before the first one
// starting with a digit (the shape, size or group) and whether the time budget ended first.
std::vector<std::string> summarize_warnings(const std::vector<std::string>& warnings);

}  // namespace parplan::profiler
