// GPU test: the profiler's memory-bound CUDA kernels (bf16 in and out, fp32 math) against the
// CPU reference kernels of profiler/cpu_reference_kernels.h on the same inputs, and the HBM
// copy kernel.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "profiler/cpu_reference_kernels.h"
#include "profiler/cuda/device_kernels.h"

namespace parplan::profiler::cuda {
namespace {

std::vector<float> to_host(const void* device, int64_t count, cudaStream_t stream) {
  float* f = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&f), sizeof(float) * count), cudaSuccess);
  convert_to_float(device, DeviceType::BF16, count, f, stream);
  std::vector<float> host(static_cast<std::size_t>(count));
  EXPECT_EQ(cudaMemcpyAsync(host.data(), f, sizeof(float) * count, cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaFree(f);
  return host;
}

int count_differences(const std::vector<float>& gpu, const std::vector<float>& cpu, double tol) {
  int wrong = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    // The GPU output is rounded to bf16 (8 mantissa bits).
    if (std::abs(gpu[i] - cpu[i]) > tol * (std::abs(cpu[i]) + 1e-2)) ++wrong;
  }
  return wrong;
}

TEST(MemoryBoundKernels, MatchTheCpuReferences) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const int64_t rows = 64, cols = 1000;
  const int64_t count = rows * cols;
  void *x = nullptr, *y = nullptr, *gamma = nullptr, *beta = nullptr;
  ASSERT_EQ(cudaMalloc(&x, 2 * count), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&y, 2 * count), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&gamma, 2 * cols), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&beta, 2 * cols), cudaSuccess);
  fill_random(x, DeviceType::BF16, count, 5, stream);
  fill_random(gamma, DeviceType::BF16, cols, 6, stream);
  fill_random(beta, DeviceType::BF16, cols, 7, stream);
  const auto hx = to_host(x, count, stream);
  const auto hg = to_host(gamma, cols, stream);
  const auto hb = to_host(beta, cols, stream);
  std::vector<float> expected(static_cast<std::size_t>(count));

  layernorm_bf16(y, x, gamma, beta, rows, cols, stream);
  reference_layernorm(expected.data(), hx.data(), hg.data(), hb.data(), rows, cols);
  EXPECT_EQ(count_differences(to_host(y, count, stream), expected, 2e-2), 0) << "layernorm";

  softmax_bf16(y, x, rows, cols, stream);
  reference_softmax(expected.data(), hx.data(), rows, cols);
  EXPECT_EQ(count_differences(to_host(y, count, stream), expected, 2e-2), 0) << "softmax";

  gelu_bf16(y, x, count, stream);
  reference_gelu(expected.data(), hx.data(), count);
  EXPECT_EQ(count_differences(to_host(y, count, stream), expected, 2e-2), 0) << "gelu";

  copy_bytes(y, x, 2 * count, stream);
  EXPECT_EQ(to_host(y, count, stream), hx) << "copy";

  cudaFree(x);
  cudaFree(y);
  cudaFree(gamma);
  cudaFree(beta);
  cudaStreamDestroy(stream);
}

TEST(CollectivePattern, OneRankAllReduceIsItsOwnInput) {
  // With one rank the all-reduce result equals the send pattern (sum over one rank: 1).
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  float* data = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&data), sizeof(float) * 1000), cudaSuccess);
  fill_collective_pattern(data, 0, 0, 1, 1000, 1000, stream);
  EXPECT_EQ(count_collective_mismatches(data, 0, 0, 1, 1000, 1000, stream), 0);
  fill_collective_pattern(data, 0, 1, 2, 1000, 1000, stream);  // rank 1 sends 2, sum is 3
  EXPECT_EQ(count_collective_mismatches(data, 0, 0, 2, 1000, 1000, stream), 1000);
  cudaFree(data);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace parplan::profiler::cuda
