// Error checks for CUDA and cuBLASLt calls: each throws parplan::Error naming the call,
// file:line and the library's error string (nvbench's NVBENCH_CUDA_CALL style). NCCL and
// CUPTI checks sit in the files that use them. Host files of profiler/cuda/ only.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "core/check.h"

namespace parplan::profiler::cuda {
[[noreturn]] void throw_call_error(const char* library, const std::string& what, const char* call,
                                   const char* file, int line);
}  // namespace parplan::profiler::cuda

#define PARPLAN_CUDA_CHECK(call)                                                                  \
  do {                                                                                            \
    const cudaError_t parplan_rc_ = (call);                                                       \
    if (parplan_rc_ != cudaSuccess) {                                                             \
      (void)cudaGetLastError();                                                                   \
      ::parplan::profiler::cuda::throw_call_error("CUDA", cudaGetErrorString(parplan_rc_), #call, \
                                                  __FILE__, __LINE__);                            \
    }                                                                                             \
  } while (0)

#define PARPLAN_CUBLAS_CHECK(call)                                                      \
  do {                                                                                  \
    const cublasStatus_t parplan_rc_ = (call);                                          \
    if (parplan_rc_ != CUBLAS_STATUS_SUCCESS) {                                         \
      ::parplan::profiler::cuda::throw_call_error(                                      \
          "cuBLASLt", cublasLtGetStatusString(parplan_rc_), #call, __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)
