// Whether a recommended plan fits in GPU memory and with what margin, in the words `plan`
// and `compare` print: "fits: peak 72.1 of 79.6 GiB per GPU (9% headroom)". Tested in
// tests/tools/plan_cli_test.cpp.
#pragma once

#include <string>

#include "cost_models/memory_model.h"

namespace parplan::tools {

// Above this share of GPU memory a plan's fit is within the memory model's error: its median
// error on published runs with a measured peak is ~8% (validate --published).
inline constexpr double kTightMemoryFraction = 0.92;

// "fits: peak 72.1 of 79.6 GiB per GPU (9% headroom)" or "does not fit: peak 95.0 GiB per GPU,
// over the 79.6 GiB there is".
std::string memory_fit_text(const cost::MemoryEstimate& memory);

// The note for a plan above kTightMemoryFraction of GPU memory (empty below it): predictions
// are within about 8%, so --max-memory-fraction 0.9 keeps headroom.
std::string tight_memory_note(const std::string& which, const cost::MemoryEstimate& memory);

}  // namespace parplan::tools
