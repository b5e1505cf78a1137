// The CUDA backend: cuBLASLt GEMMs (bf16, fp16, fp8 e4m3 on sm >= 89) over the transformer
// shapes, the HBM copy kernel, memory-bound kernels (layer norm, softmax, GELU), each timed
// by the kernel timer (CUPTI by default) with L2 flushed between samples, and (given one)
// the NCCL collectives. One GPU per rank: local rank modulo the visible devices.
// No CUDA types in this header. Tested on GPU machines (gpu label, tools/gpu_check.sh).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "profiler/backend.h"
#include "profiler/cuda/kernel_timer.h"

namespace parplan::profiler::cuda {

std::unique_ptr<Backend> make_cuda_backend(std::map<std::string, std::string> software,
                                           std::unique_ptr<CollectiveBenchmark> collectives,
                                           KernelTimerFactory timers);

// The compute capability's tensor-core generation (GpuSpec::architecture) and dense
// FLOP per clock per SM by precision (0: unknown), from NVIDIA's architecture whitepapers.
std::string architecture_of(int compute_capability);
double dense_flops_per_clock_per_sm(int compute_capability, const std::string& precision);

}  // namespace parplan::profiler::cuda
