// Error checks and launch helpers shared by the executor's CUDA sources (as every
// parplan error: the failed call, file:line and the CUDA/cuBLAS message, thrown as
// parplan::Error).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/check.h"

namespace parplan::executor::cuda {

[[noreturn]] inline void throw_cuda(const char* call, const char* file, int line,
                                    const std::string& what) {
  throw Error(std::string("CUDA call ") + call + " failed at " + file + ":" + std::to_string(line) +
              ": " + what);
}

}  // namespace parplan::executor::cuda

#define PARPLAN_CUDA_CHECK(call)                                                  \
  do {                                                                            \
    const cudaError_t parplan_status_ = (call);                                   \
    if (parplan_status_ != cudaSuccess) {                                         \
      ::parplan::executor::cuda::throw_cuda(#call, __FILE__, __LINE__,            \
                                            cudaGetErrorString(parplan_status_)); \
    }                                                                             \
  } while (0)

#define PARPLAN_CUBLAS_CHECK(call)                                                   \
  do {                                                                               \
    const cublasStatus_t parplan_status_ = (call);                                   \
    if (parplan_status_ != CUBLAS_STATUS_SUCCESS) {                                  \
      ::parplan::executor::cuda::throw_cuda(#call, __FILE__, __LINE__,               \
                                            cublasGetStatusString(parplan_status_)); \
    }                                                                                \
  } while (0)

// After a kernel launch: configuration errors surface here, execution errors at the next sync.
#define PARPLAN_CUDA_LAUNCHED() PARPLAN_CUDA_CHECK(cudaGetLastError())

namespace parplan::executor::cuda {

inline constexpr int kThreads = 256;

inline unsigned blocks_for(int64_t n, int threads = kThreads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

// Sum / max over a block (blockDim.x a multiple of 32, at most 1024); every thread gets the
// result.
template <typename T>
__device__ inline T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
template <typename T>
__device__ inline T warp_max(T v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
template <typename T>
__device__ inline T block_sum(T v) {
  __shared__ T partial[32];
  v = warp_sum(v);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  T total = lane < warps ? partial[lane] : T(0);
  return warp_sum(total);
}
template <typename T>
__device__ inline T block_max(T v) {
  __shared__ T partial[32];
  v = warp_max(v);
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  T total = lane < warps ? partial[lane] : T(-INFINITY);
  return warp_max(total);
}

}  // namespace parplan::executor::cuda
