#include "core/gemm_efficiency.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"

namespace parplan {

double gemm_flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
         static_cast<double>(s.batch);
}

double gemm_element_bytes(Precision precision) {
  switch (precision) {
    case Precision::Fp8:
      return 1.0;
    case Precision::Fp32:
      return 4.0;
    case Precision::Fp16:
    case Precision::Bf16:
      break;
  }
  return 2.0;
}

double gemm_efficiency(const GpuSpec& gpu, const GemmShape& s, Precision precision) {
  const double m = static_cast<double>(s.m);
  const double n = static_cast<double>(s.n);
  const double k = static_cast<double>(s.k);
  double f =
      (m / (m + gpu.gemm_m_half)) * (n / (n + gpu.gemm_n_half)) * (k / (k + gpu.gemm_k_half));
  if (gpu.sm_count > 0 && gpu.gemm_tile_m > 0 && gpu.gemm_tile_n > 0) {
    const double tiles = std::ceil(m / static_cast<double>(gpu.gemm_tile_m)) *
                         std::ceil(n / static_cast<double>(gpu.gemm_tile_n)) *
                         static_cast<double>(s.batch);
    const double sms = static_cast<double>(gpu.sm_count);
    const double waves = std::ceil(tiles / sms);
    f *= tiles / (waves * sms);
  }
  return std::clamp(gpu.max_matmul_efficiency(precision) * f, 1e-6, 1.0);
}

double gemm_time_s(const GpuSpec& gpu, const GemmShape& s, Precision precision) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return 0.0;
  const double peak = gpu.computed_peak_tflops(precision);
  const double compute_s = gemm_flops(s) / (peak * kTera * gpu.sustained_clock_fraction *
                                            gemm_efficiency(gpu, s, precision));
  const double elem = gemm_element_bytes(precision);
  const double bytes = (static_cast<double>(s.m) * static_cast<double>(s.k) +
                        static_cast<double>(s.k) * static_cast<double>(s.n) +
                        static_cast<double>(s.m) * static_cast<double>(s.n)) *
                       elem * static_cast<double>(s.batch);
  const double memory_s = bytes / (gpu.hbm_bandwidth_gbps * kGB * gpu.hbm_efficiency);
  return std::max({gpu.kernel_launch_us * kUs, compute_s, memory_s});
}

}  // namespace parplan
