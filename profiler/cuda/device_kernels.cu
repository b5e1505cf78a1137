// Device code of device_kernels.h. Simple, readable kernels (grid-stride loops, one block
// per row for the row-wise ones): they stand for their class of memory-bound work, they are
// not tuned. GELU is the tanh form (Hendrycks & Gimpel 2016).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda/cuda_check.h"
#include "profiler/cuda/device_kernels.h"

namespace parplan::profiler::cuda {

namespace {

constexpr int kThreads = 256;

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

int blocks_for(int64_t count) {
  return static_cast<int>(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 65535));
}

__device__ float hash_uniform(uint64_t seed, int64_t i) {
  // splitmix64 of (seed, i) -> [-1, 1)
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1ull << 23) - 1.0f;
}

template <typename T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __half from_float<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <typename T>
__global__ void fill_random_kernel(T* data, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    data[i] = from_float<T>(hash_uniform(seed, i));
  }
}

template <typename T>
__global__ void to_float_kernel(const T* data, int64_t count, float* out) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<float>(data[i]);
  }
}

__global__ void copy_kernel(int4* dst, const int4* src, int64_t count) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

// Block-wide sum over kThreads threads.
__device__ float block_sum(float v, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? shared[threadIdx.x] : 0.0f;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const float total = shared[0];
  __syncthreads();
  return total;
}

__device__ float block_max(float v, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? shared[threadIdx.x] : -INFINITY;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2)
      v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  const float total = shared[0];
  __syncthreads();
  return total;
}

__global__ void layernorm_kernel(__nv_bfloat16* out, const __nv_bfloat16* x,
                                 const __nv_bfloat16* gamma, const __nv_bfloat16* beta,
                                 int64_t cols) {
  __shared__ float shared[32];
  const __nv_bfloat16* row = x + blockIdx.x * cols;
  __nv_bfloat16* y = out + blockIdx.x * cols;
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += __bfloat162float(row[c]);
  const float mean = block_sum(sum, shared) / static_cast<float>(cols);
  float var = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = __bfloat162float(row[c]) - mean;
    var += d * d;
  }
  const float rstd = rsqrtf(block_sum(var, shared) / static_cast<float>(cols) + 1e-5f);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = (__bfloat162float(row[c]) - mean) * rstd;
    y[c] = __float2bfloat16(v * __bfloat162float(gamma[c]) + __bfloat162float(beta[c]));
  }
}

__global__ void softmax_kernel(__nv_bfloat16* out, const __nv_bfloat16* x, int64_t cols) {
  __shared__ float shared[32];
  const __nv_bfloat16* row = x + blockIdx.x * cols;
  __nv_bfloat16* y = out + blockIdx.x * cols;
  float m = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, __bfloat162float(row[c]));
  m = block_max(m, shared);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    sum += __expf(__bfloat162float(row[c]) - m);
  const float inv = 1.0f / block_sum(sum, shared);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    y[c] = __float2bfloat16(__expf(__bfloat162float(row[c]) - m) * inv);
  }
}

__global__ void gelu_kernel(__nv_bfloat16* out, const __nv_bfloat16* x, int64_t count) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = __bfloat162float(x[i]);
    out[i] =
        __float2bfloat16(0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + 0.044715f * v * v * v))));
  }
}

// The patterns of profiler/mpi/mpi_collectives.cpp (op numbers of core/collective.h:
// 0 all_reduce, 1 all_gather, 2 reduce_scatter, 3 all_to_all, 4 send_recv).
__device__ float send_value(int op, int r, int n, int64_t per, int64_t i) {
  return op == 3 ? static_cast<float>(r * n + i / per + 1) : static_cast<float>(r + 1);
}
__device__ float expected_value(int op, int r, int n, int64_t per, int64_t i) {
  switch (op) {
    case 0:
    case 2:
      return static_cast<float>(n) * static_cast<float>(n + 1) / 2.0f;
    case 1:
      return static_cast<float>(i / per + 1);
    case 3:
      return static_cast<float>((i / per) * n + r + 1);
    default:
      return static_cast<float>((r - 1 + n) % n + 1);
  }
}

__global__ void fill_pattern_kernel(float* send, int op, int r, int n, int64_t per, int64_t count) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    send[i] = send_value(op, r, n, per, i);
  }
}

__global__ void mismatch_kernel(const float* recv, int op, int r, int n, int64_t per, int64_t count,
                                unsigned long long* wrong) {
  unsigned long long local = 0;
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    local += recv[i] != expected_value(op, r, n, per, i) ? 1 : 0;
  }
  if (local > 0) atomicAdd(wrong, local);
}

}  // namespace

int64_t device_type_bytes(DeviceType type) {
  switch (type) {
    case DeviceType::F32:
      return 4;
    case DeviceType::F16:
    case DeviceType::BF16:
      return 2;
    case DeviceType::Fp8E4M3:
      return 1;
  }
  return 4;
}

void fill_random(void* data, DeviceType type, int64_t count, uint64_t seed, void* stream) {
  const int blocks = blocks_for(count);
  switch (type) {
    case DeviceType::F32:
      fill_random_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<float*>(data),
                                                                     count, seed);
      break;
    case DeviceType::F16:
      fill_random_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<__half*>(data),
                                                                     count, seed);
      break;
    case DeviceType::BF16:
      fill_random_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(
          static_cast<__nv_bfloat16*>(data), count, seed);
      break;
    case DeviceType::Fp8E4M3:
      fill_random_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(
          static_cast<__nv_fp8_e4m3*>(data), count, seed);
      break;
  }
  PARPLAN_CUDA_CHECK(cudaGetLastError());
}

void convert_to_float(const void* data, DeviceType type, int64_t count, float* out, void* stream) {
  const int blocks = blocks_for(count);
  switch (type) {
    case DeviceType::F32:
      to_float_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<const float*>(data),
                                                                  count, out);
      break;
    case DeviceType::F16:
      to_float_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<const __half*>(data),
                                                                  count, out);
      break;
    case DeviceType::BF16:
      to_float_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(
          static_cast<const __nv_bfloat16*>(data), count, out);
      break;
    case DeviceType::Fp8E4M3:
      to_float_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(
          static_cast<const __nv_fp8_e4m3*>(data), count, out);
      break;
  }
  PARPLAN_CUDA_CHECK(cudaGetLastError());
}

void copy_bytes(void* dst, const void* src, int64_t bytes, void* stream) {
  PARPLAN_CHECK(bytes % 16 == 0, "copy_bytes needs a multiple of 16 bytes, got ", bytes);
  const int64_t count = bytes / 16;
  // Enough blocks to fill any current GPU several times over.
  const int blocks = static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 65535));
  copy_kernel<<<std::max(blocks, 1), kThreads, 0, as_stream(stream)>>>(
      static_cast<int4*>(dst), static_cast<const int4*>(src), count);
  PARPLAN_CUDA_CHECK(cudaGetLastError());
}

void layernorm_bf16(void* out, const void* x, const void* gamma, const void* beta, int64_t rows,
                    int64_t cols, void* stream) {
  layernorm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, as_stream(stream)>>>(
      static_cast<__nv_bfloat16*>(out), static_cast<const __nv_bfloat16*>(x),
      static_cast<const __nv_bfloat16*>(gamma), static_cast<const __nv_bfloat16*>(beta), cols);
  PARPLAN_CUDA_CHECK(cudaGetLastError());
}

void softmax_bf16(void* out, const void* x, int64_t rows, int64_t cols, void* stream) {
  softmax_kernel<<<static_cast<unsigned>(rows), kThreads, 0, as_stream(stream)>>>(
      static_cast<__nv_bfloat16*>(out), static_cast<const __nv_bfloat16*>(x), cols);
  PARPLAN_CUDA_CHECK(cudaGetLastError());
}

void gelu_bf16(void* out, const void* x, int64_t count, void* stream) {
  gelu_kernel<<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(
      static_cast<__nv_bfloat16*>(out), static_cast<const __nv_bfloat16*>(x), count);
  PARPLAN_CUDA_CHECK(cudaGetLastError());
}

void fill_collective_pattern(float* send, int op, int rank, int ranks, int64_t per_rank,
                             int64_t count, void* stream) {
  fill_pattern_kernel<<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(send, op, rank, ranks,
                                                                             per_rank, count);
  PARPLAN_CUDA_CHECK(cudaGetLastError());
}

int64_t count_collective_mismatches(const float* recv, int op, int rank, int ranks,
                                    int64_t per_rank, int64_t count, void* stream) {
  unsigned long long* wrong = nullptr;
  PARPLAN_CUDA_CHECK(
      cudaMallocAsync(reinterpret_cast<void**>(&wrong), sizeof *wrong, as_stream(stream)));
  PARPLAN_CUDA_CHECK(cudaMemsetAsync(wrong, 0, sizeof *wrong, as_stream(stream)));
  mismatch_kernel<<<blocks_for(count), kThreads, 0, as_stream(stream)>>>(recv, op, rank, ranks,
                                                                         per_rank, count, wrong);
  PARPLAN_CUDA_CHECK(cudaGetLastError());
  unsigned long long host = 0;
  PARPLAN_CUDA_CHECK(
      cudaMemcpyAsync(&host, wrong, sizeof host, cudaMemcpyDeviceToHost, as_stream(stream)));
  PARPLAN_CUDA_CHECK(cudaFreeAsync(wrong, as_stream(stream)));
  PARPLAN_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
  return static_cast<int64_t>(host);
}

}  // namespace parplan::profiler::cuda
