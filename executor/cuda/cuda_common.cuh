// Launch helpers shared by the executor's CUDA sources; the error checks
// (PARPLAN_CUDA_CHECK, PARPLAN_CUBLAS_CHECK) are the profiler's too: core/cuda/cuda_check.h.
#pragma once

#include <cstdint>
#include <string>

#include "core/cuda/cuda_check.h"

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
