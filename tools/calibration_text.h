// How every output names a calibration (`--calibration`, core/calibration.h) that its
// predictions used: the factors that differ from the identity, as JSON and as one line of text.
// Tested in tests/tools/calibrate_cli_test.cpp.
#pragma once

#include <string>

#include "core/calibration.h"
#include "core/json_input.h"

namespace parplan::tools {

// {name: value} of the factors that differ from the identity; {} for the identity.
Json calibration_factors_json(const Calibration& calibration);

// "compute_throughput_fraction 0.912, step_overhead_s 0.03" in the order of core/calibration.h;
// "" for the identity.
std::string calibration_factors_text(const Calibration& calibration);

}  // namespace parplan::tools
