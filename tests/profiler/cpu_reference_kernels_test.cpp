// Unit tests of the profiler's CPU reference kernels against closed forms.
#include "profiler/cpu_reference_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/check.h"

namespace parplan::profiler {
namespace {

TEST(ReferenceKernels, LayerNormNormalisesEachRow) {
  const int64_t rows = 3, cols = 64;
  std::vector<float> x(rows * cols), out(rows * cols), gamma(cols, 2.0f), beta(cols, 0.5f);
  for (int64_t i = 0; i < rows * cols; ++i)
    x[static_cast<std::size_t>(i)] = std::sin(0.3f * i) * (1 + i / 64);
  reference_layernorm(out.data(), x.data(), gamma.data(), beta.data(), rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += (out[r * cols + c] - 0.5) / 2.0;
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c) var += std::pow((out[r * cols + c] - 0.5) / 2.0 - mean, 2);
    EXPECT_NEAR(mean, 0.0, 1e-5);
    EXPECT_NEAR(var / cols, 1.0, 1e-3);
  }
}

TEST(ReferenceKernels, RmsNormHasUnitRootMeanSquare) {
  const int64_t rows = 2, cols = 128;
  std::vector<float> x(rows * cols), out(rows * cols), gamma(cols, 1.0f);
  for (int64_t i = 0; i < rows * cols; ++i)
    x[static_cast<std::size_t>(i)] = 3.0f + std::cos(0.1f * i);
  reference_rmsnorm(out.data(), x.data(), gamma.data(), rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += out[r * cols + c] * out[r * cols + c];
    EXPECT_NEAR(std::sqrt(sum / cols), 1.0, 1e-4);
  }
}

TEST(ReferenceKernels, GeluAndSwigluClosedForms) {
  const std::vector<float> x = {-3.0f, -1.0f, 0.0f, 0.5f, 2.0f};
  std::vector<float> out(x.size());
  reference_gelu(out.data(), x.data(), static_cast<int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double expected =
        0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(out[i], expected, 1e-6);
  }
  EXPECT_NEAR(out[4], 1.9546, 1e-4);  // GELU(2) (tanh form)
  const std::vector<float> up = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  reference_swiglu(out.data(), x.data(), up.data(), static_cast<int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(out[i], x[i] / (1 + std::exp(-x[i])) * up[i], 1e-6);
  }
}

TEST(ReferenceKernels, SoftmaxRowsSumToOneAndKeepOrder) {
  const int64_t rows = 4, cols = 33;
  std::vector<float> x(rows * cols), out(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    x[static_cast<std::size_t>(i)] = 0.25f * (i % 17) + 100.0f;
  reference_softmax(out.data(), x.data(), rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float sum = std::accumulate(out.begin() + r * cols, out.begin() + (r + 1) * cols, 0.0f);
    EXPECT_NEAR(sum, 1.0f, 1e-5);
  }
  EXPECT_NEAR(out[1] / out[0], std::exp(0.25f), 1e-4);
}

TEST(ReferenceKernels, KernelTableCountsBytes) {
  for (const auto& name : memory_bound_kernel_names()) {
    auto k = make_memory_bound_kernel(name, 16, 32);
    k.run();
    const double per_element = name == "swiglu" ? 12.0 : 8.0;
    EXPECT_DOUBLE_EQ(k.bytes, per_element * 16 * 32) << name;
  }
  EXPECT_THROW(make_memory_bound_kernel("matmul", 1, 1), Error);
}

}  // namespace
}  // namespace parplan::profiler
