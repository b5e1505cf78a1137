#include "profiler/cpu_reference_kernels.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace parplan::profiler {

void reference_layernorm(float* out, const float* x, const float* gamma, const float* beta,
                         int64_t rows, int64_t cols, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float* y = out + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += row[c];
    const float mean = static_cast<float>(sum / static_cast<double>(cols));
    double var = 0.0;
    for (int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    const float rstd = 1.0f / std::sqrt(static_cast<float>(var / static_cast<double>(cols)) + eps);
    for (int64_t c = 0; c < cols; ++c) y[c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
  }
}

void reference_rmsnorm(float* out, const float* x, const float* gamma, int64_t rows, int64_t cols,
                       float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float* y = out + r * cols;
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) sum += row[c] * row[c];
    const float rms = 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(cols)) + eps);
    for (int64_t c = 0; c < cols; ++c) y[c] = row[c] * rms * gamma[c];
  }
}

void reference_gelu(float* out, const float* x, int64_t count) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < count; ++i) {
    const float v = x[i];
    out[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v)));
  }
}

void reference_swiglu(float* out, const float* gate, const float* up, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void reference_softmax(float* out, const float* x, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    float* y = out + r * cols;
    const float max = *std::max_element(row, row + cols);
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = std::exp(row[c] - max);
      sum += y[c];
    }
    const float inv = 1.0f / sum;
    for (int64_t c = 0; c < cols; ++c) y[c] *= inv;
  }
}

std::vector<std::string> memory_bound_kernel_names() {
  return {"layernorm", "rmsnorm", "gelu", "swiglu", "softmax"};
}

MemoryBoundKernel make_memory_bound_kernel(const std::string& name, int64_t rows, int64_t cols) {
  MemoryBoundKernel k;
  k.name = name;
  k.rows = rows;
  k.cols = cols;
  const auto n = static_cast<std::size_t>(rows * cols);
  const auto width = static_cast<std::size_t>(cols);
  constexpr double kF = sizeof(float);
  // Deterministic, varied inputs in [-2, 2].
  k.a.resize(n);
  for (std::size_t i = 0; i < n; ++i) k.a[i] = static_cast<float>((i * 37 % 1001) / 250.0 - 2.0);
  k.out.resize(n);
  const double elements = static_cast<double>(rows) * static_cast<double>(cols);
  if (name == "layernorm" || name == "rmsnorm") {
    k.b.assign(width, 1.1f);
    k.c.assign(width, 0.1f);
    // x read, y written; gamma/beta are cache resident and not counted.
    k.bytes = 2.0 * elements * kF;
  } else if (name == "gelu" || name == "softmax") {
    k.bytes = 2.0 * elements * kF;
  } else if (name == "swiglu") {
    k.b = k.a;
    std::reverse(k.b.begin(), k.b.end());
    k.bytes = 3.0 * elements * kF;
  } else {
    throw Error("unknown memory-bound kernel \"" + name + "\"");
  }
  return k;
}

void MemoryBoundKernel::run() {
  if (name == "layernorm") {
    reference_layernorm(out.data(), a.data(), b.data(), c.data(), rows, cols);
  } else if (name == "rmsnorm") {
    reference_rmsnorm(out.data(), a.data(), b.data(), rows, cols);
  } else if (name == "gelu") {
    reference_gelu(out.data(), a.data(), rows * cols);
  } else if (name == "swiglu") {
    reference_swiglu(out.data(), a.data(), b.data(), rows * cols);
  } else {
    reference_softmax(out.data(), a.data(), rows, cols);
  }
}

}  // namespace parplan::profiler
