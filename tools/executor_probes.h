// The executor's CPU kernels as profiler probes: `parplan profile --backend cpu` times them
// beside the reference kernels, so the profile's node carries their measured throughput
// (kernel_gbps, attention_tflops) and the cost model predicts the executor with them.
// tools/ is where the profiler and the executor meet (neither depends on the other).
// Tested through tests/tools/validate_run_test.cpp and the profile tests.
#pragma once

#include <vector>

#include "profiler/profile_options.h"

namespace parplan::tools {

// Kernel names match the kinds cost_models/layer_cost.cpp asks kernel_gbps for.
std::vector<profiler::KernelProbe> executor_cpu_probes(bool quick);

}  // namespace parplan::tools
