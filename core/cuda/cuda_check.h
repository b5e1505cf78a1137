// Checks of CUDA runtime, cuBLAS and cuBLASLt calls for the profiler's and the executor's CUDA
// sources: a failed call throws parplan::Error through core/backend_check.h (nvbench's
// NVBENCH_CUDA_CALL style). A failed runtime call also clears the thread's last error, so a
// non-sticky failure does not resurface at the next unrelated check.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "core/backend_check.h"

#define PARPLAN_CUDA_CHECK(call)                                                               \
  do {                                                                                         \
    const cudaError_t parplan_rc_ = (call);                                                    \
    if (parplan_rc_ != cudaSuccess) {                                                          \
      (void)cudaGetLastError();                                                                \
      ::parplan::throw_backend_error("CUDA", cudaGetErrorString(parplan_rc_), #call, __FILE__, \
                                     __LINE__);                                                \
    }                                                                                          \
  } while (0)

// cuBLAS (cublas_v2.h handles).
#define PARPLAN_CUBLAS_CHECK(call)                                                        \
  do {                                                                                    \
    const cublasStatus_t parplan_rc_ = (call);                                            \
    if (parplan_rc_ != CUBLAS_STATUS_SUCCESS) {                                           \
      ::parplan::throw_backend_error("cuBLAS", cublasGetStatusString(parplan_rc_), #call, \
                                     __FILE__, __LINE__);                                 \
    }                                                                                     \
  } while (0)

// cuBLASLt (cublasLt.h handles and matmul descriptors).
#define PARPLAN_CUBLASLT_CHECK(call)                                                          \
  do {                                                                                        \
    const cublasStatus_t parplan_rc_ = (call);                                                \
    if (parplan_rc_ != CUBLAS_STATUS_SUCCESS) {                                               \
      ::parplan::throw_backend_error("cuBLASLt", cublasLtGetStatusString(parplan_rc_), #call, \
                                     __FILE__, __LINE__);                                     \
    }                                                                                         \
  } while (0)
