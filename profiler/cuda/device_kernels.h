// The profiler's own small CUDA kernels, callable from host code without CUDA headers
// (streams as void*): deterministic fills and conversions for GEMM operands, the HBM copy
// kernel, memory-bound kernels of a transformer layer (layer norm, softmax, GELU on bf16 with
// fp32 math) and the collective data patterns. Defined in device_kernels.cu. Tested by the
// gpu-labelled tests in tests/gpu against CPU references.
#pragma once

#include <cstdint>

namespace parplan::profiler::cuda {

enum class DeviceType { F32, F16, BF16, Fp8E4M3 };
int64_t device_type_bytes(DeviceType type);

// data[i] = a pseudo-random value in [-1, 1) from (seed, i), rounded to the type.
void fill_random(void* data, DeviceType type, int64_t count, uint64_t seed, void* stream);
// out[i] = float(data[i]) (device memory both).
void convert_to_float(const void* data, DeviceType type, int64_t count, float* out, void* stream);

// dst = src, 16 bytes per thread and step; bytes must be a multiple of 16.
void copy_bytes(void* dst, const void* src, int64_t bytes, void* stream);

// Row-wise over rows x cols bf16 (row-major), fp32 statistics.
void layernorm_bf16(void* out, const void* x, const void* gamma, const void* beta, int64_t rows,
                    int64_t cols, void* stream);
void softmax_bf16(void* out, const void* x, int64_t rows, int64_t cols, void* stream);
void gelu_bf16(void* out, const void* x, int64_t count, void* stream);

// Collective data check, the pattern of the MPI benchmark: `op` is core's Collective as int.
void fill_collective_pattern(float* send, int op, int rank, int ranks, int64_t per_rank,
                             int64_t count, void* stream);
// Counts received elements that differ from the expected pattern; synchronises the stream.
int64_t count_collective_mismatches(const float* recv, int op, int rank, int ranks,
                                    int64_t per_rank, int64_t count, void* stream);

}  // namespace parplan::profiler::cuda
