// GPU test: cuBLASLt GEMMs at every precision the device has, against a CPU reference
// computed from the very operands on the device (converted to float); and the kernel
// timers: CUPTI must report the GEMM's kernel records with a positive duration.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>

#include "profiler/cuda/cublaslt_gemm.h"
#include "profiler/cuda/kernel_timer.h"

namespace parplan::profiler::cuda {
namespace {

int compute_capability() {
  cudaDeviceProp prop{};
  EXPECT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  return prop.major * 10 + prop.minor;
}

// D = A^T B per batch with A stored K x M and B stored K x N (column-major), as cuBLASLt ran it.
std::vector<double> reference(const GemmShape& s, const std::vector<float>& a,
                              const std::vector<float>& b) {
  std::vector<double> d(static_cast<std::size_t>(s.m * s.n * s.batch));
  for (int64_t p = 0; p < s.batch; ++p) {
    for (int64_t j = 0; j < s.n; ++j) {
      for (int64_t i = 0; i < s.m; ++i) {
        double sum = 0;
        for (int64_t k = 0; k < s.k; ++k) {
          sum +=
              static_cast<double>(a[p * s.k * s.m + i * s.k + k]) * b[p * s.k * s.n + j * s.k + k];
        }
        d[p * s.m * s.n + j * s.m + i] = sum;
      }
    }
  }
  return d;
}

TEST(CublasLtGemm, MatchesTheCpuReferenceAtEveryPrecision) {
  const int cc = compute_capability();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const GemmShape shape{128, 256, 64, 2};
  for (const char* precision : {"bf16", "fp16", "fp8"}) {
    if (!gemm_precision_supported(precision, cc)) continue;
    CublasLtGemm gemm(shape, precision, stream, 42);
    gemm.run();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const auto expected = reference(shape, gemm.a_as_float(), gemm.b_as_float());
    const auto d = gemm.d_as_float();
    ASSERT_EQ(d.size(), expected.size());
    // fp32 accumulation; the output is rounded to 16 bits (8 mantissa bits for bf16).
    const double relative = std::string(precision) == "fp16" ? 2e-3 : 1e-2;
    int wrong = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (std::abs(d[i] - expected[i]) > relative * std::abs(expected[i]) + 1e-2) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << precision << ": " << wrong << " of " << d.size() << " elements differ";
    std::printf("%s GEMM %s: matches the CPU reference\n", precision, "128x256x64x2");
  }
  cudaStreamDestroy(stream);
}

TEST(KernelTimers, CuptiReportsTheGemmKernels) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  CublasLtGemm gemm({4096, 4096, 4096, 1}, "bf16", stream, 1);
  gemm.run();  // warm-up (loads the kernel)
  double cupti_seconds = 0;
  {
    auto cupti = make_cupti_kernel_timer(stream);
    cupti->start();
    gemm.run();
    const double seconds = cupti->stop();
    ASSERT_FALSE(cupti->kernels().empty()) << "CUPTI returned no kernel records";
    for (const auto& k : cupti->kernels()) {
      EXPECT_FALSE(k.name.empty());
      EXPECT_GT(k.end_ns, k.start_ns);
      std::printf("CUPTI kernel %s: %.3f us, grid %u\n", k.name.c_str(),
                  (k.end_ns - k.start_ns) * 1e-3, k.grid_x);
    }
    // 137 GFLOP: more than 50 us on any GPU, less than a second.
    EXPECT_GT(seconds, 50e-6);
    EXPECT_LT(seconds, 1.0);
    cupti_seconds = seconds;
  }
  // An event window also holds the host's launch gap (on an H200, one GEMM timed alone right
  // after CUPTI's window read 5.8 ms against CUPTI's 0.18 ms): time ten back-to-back GEMMs
  // after a warm-up, so the gap is spread over them, and compare the mean.
  gemm.run();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  constexpr int kRuns = 10;
  auto events = make_event_kernel_timer(stream);
  events->start();
  for (int i = 0; i < kRuns; ++i) gemm.run();
  const double event_seconds = events->stop() / kRuns;
  EXPECT_NEAR(event_seconds / cupti_seconds, 1.0, 0.5);
  std::printf("bf16 4096^3: CUPTI %.1f us, events %.1f us (mean of %d) (%.0f TFLOP/s)\n",
              cupti_seconds * 1e6, event_seconds * 1e6, kRuns,
              2.0 * 4096 * 4096 * 4096 / cupti_seconds / 1e12);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace parplan::profiler::cuda
