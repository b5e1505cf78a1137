// The CUDA backend of Compute (executor/compute.h): device memory from cudaMallocAsync,
// GEMMs from cuBLAS, every other op our own kernel (executor/cuda/*.cu). All work is on the
// legacy default stream, which the NCCL communicator shares, so ops and collectives are
// ordered without extra events. Plain C++ header: no CUDA types leak out.
// Tested in tests/gpu/executor_cuda_ops_gpu_test.cpp (label gpu) against the CPU reference.
#pragma once

#include <memory>

#include "executor/compute.h"

namespace parplan::executor {

// Uses GPU `host_rank` modulo the number of visible GPUs; throws parplan::Error when there is
// none.
template <typename T>
std::unique_ptr<Compute<T>> make_cuda_compute(int host_rank);

int cuda_device_count();

}  // namespace parplan::executor
