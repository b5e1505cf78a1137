// Time of one GEMM (core/gemm_efficiency.h) or one memory-bound kernel on the plan's GPU, for
// the layer models (layer_cost.cpp, attention_cost.cpp): a GEMM's forward and its backward
// pair, and a kernel moving a number of bytes at the rate memory_kernel_bytes_per_s gives.
// Tested through the layer models in tests/cost_models/step_model_test.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/gemm_efficiency.h"
#include "core/units.h"
#include "cost_models/layer_cost.h"

namespace parplan::cost {

// Backward passes read saved tensors and gradients: about twice the forward bytes.
inline constexpr double kBackwardBytesFactor = 2.0;

struct OpTime {
  const CostContext& ctx;
  const GpuSpec& gpu;
  Precision gemm_precision;

  // An (m x k) by (k x n) GEMM, `batch` of them in one launch.
  double gemm(double m, double n, double k, double batch = 1) const {
    GemmShape shape{static_cast<int64_t>(std::llround(std::max(1.0, m))),
                    static_cast<int64_t>(std::llround(std::max(1.0, n))),
                    static_cast<int64_t>(std::llround(std::max(1.0, k))),
                    static_cast<int64_t>(std::llround(std::max(1.0, batch)))};
    return gemm_time_s(gpu, shape, gemm_precision);
  }
  // Forward GEMM and its backward pair (input gradient, weight gradient); `batch` GEMMs of
  // the shape in one grouped launch (Megatron-Core's grouped GEMM for the local experts).
  double gemm_forward(double m, double n, double k, double batch = 1) const {
    return gemm(m, n, k, batch);
  }
  double gemm_dgrad(double m, double n, double k, double batch = 1) const {
    return gemm(m, k, n, batch);
  }
  double gemm_wgrad(double m, double n, double k, double batch = 1) const {
    return gemm(k, n, m, batch);
  }

  // A memory-bound kernel moving `bytes` (memory_kernel_bytes_per_s), at least one launch.
  double memory(double bytes, const char* kind = nullptr) const {
    return std::max(
        gpu.kernel_launch_us * kUs,
        bytes / memory_kernel_bytes_per_s(gpu, ctx.traits, kind, ctx.training->precision));
  }
};

// The precision of the job's GEMMs, and of its attention kernels and output layer (16-bit in
// fp8 recipes).
inline Precision gemm_precision_of(const TrainingSpec& training) { return training.precision; }
inline Precision attention_precision_of(const TrainingSpec& training) {
  return training.precision == Precision::Fp32 ? Precision::Fp32 : Precision::Bf16;
}

}  // namespace parplan::cost
