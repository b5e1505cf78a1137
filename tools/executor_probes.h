// The executor's kernels as profiler probes: `parplan profile` times them beside the reference
// kernels, so the profile's node carries their measured throughput (kernel_gbps,
// attention_tflops; on a GPU also the executor's fp32 GEMMs) and the cost model predicts the
// executor with what it runs. tools/ is where the profiler and the executor meet (neither
// depends on the other). Tested through tests/tools/validate_run_test.cpp, the profile tests
// and, on a GPU, tools/gpu_check.sh (the check job predicted from the profile).
#pragma once

#include <vector>

#include "profiler/profile_options.h"

namespace parplan::tools {

// Kernel names match the kinds cost_models/layer_cost.cpp asks kernel_gbps for.
std::vector<profiler::KernelProbe> executor_cpu_probes(bool quick);

// The CUDA executor's kernels on the GPU of this node-local rank, at sizes of the GPU
// executor's models (activations far larger than L2), and its fp32 cuBLAS GEMMs over a grid
// of transformer-layer shapes (the fit of those gives the node's fp32 GEMM figures).
std::vector<profiler::KernelProbe> executor_cuda_probes(bool quick, int node_local_rank);

}  // namespace parplan::tools
