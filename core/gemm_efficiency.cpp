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

namespace {

// Shallowest K slice a split-K / stream-K kernel gives one processor: four 64-deep k-tiles
// (CUTLASS's split-K and stream-K GEMMs partition the K loop in whole k-tiles and need several
// per unit of work to amortise the partial-sum fix-up).
constexpr double kSplitKMinDepth = 256;

// The tile edge for a dimension: the library's large tile, or the dimension itself when it is
// narrower (libraries run narrow tiles for skinny shapes; the *_half ramp prices their
// under-filled pipelines, so a narrow dimension is not also charged padding).
double kernel_tile(int64_t tile, int64_t dimension) {
  return static_cast<double>(std::min(tile, dimension));
}

}  // namespace

double gemm_efficiency(const GpuSpec& gpu, const GemmShape& s, Precision precision) {
  const double m = static_cast<double>(s.m);
  const double n = static_cast<double>(s.n);
  const double k = static_cast<double>(s.k);
  const GpuSpec::GemmRamps half = gpu.gemm_ramps(precision);
  if (gpu.sm_count <= 0 || gpu.gemm_tile_m <= 0 || gpu.gemm_tile_n <= 0) {
    const double f = (m / (m + half.m_half)) * (n / (n + half.n_half)) * (k / (k + half.k_half));
    return std::clamp(gpu.max_matmul_efficiency(precision) * f, 1e-6, 1.0);
  }
  // The machine computes whole tiles in whole waves: of the m_pad * n_pad outputs of whole
  // tiles only m * n are useful, and the last wave leaves processors idle. A partial tile or a
  // partial last wave costs what a full one does. The *_half ramps (pipeline fill of small
  // problems) apply to the problem's own dimensions, and to each split's depth.
  const double tile_m = kernel_tile(gpu.gemm_tile_m, s.m);
  const double tile_n = kernel_tile(gpu.gemm_tile_n, s.n);
  const double m_pad = std::ceil(m / tile_m) * tile_m;
  const double n_pad = std::ceil(n / tile_n) * tile_n;
  const double batch = static_cast<double>(s.batch);
  const double output_tiles = (m_pad / tile_m) * (n_pad / tile_n) * batch;
  const double sms = static_cast<double>(gpu.sm_count);
  // Fewer output tiles than processors: the library splits K over the idle ones (split-K,
  // stream-K), each split at least kSplitKMinDepth deep.
  const double splits =
      std::max(1.0, std::min(std::floor(sms / output_tiles), std::floor(k / kSplitKMinDepth)));
  const double tiles = output_tiles * splits;
  const double depth = k / splits;
  const double waves = std::ceil(tiles / sms);
  const double ramps = (m / (m + half.m_half)) * (n / (n + half.n_half));
  const double padded = ramps * (depth / (depth + half.k_half)) * tiles / (waves * sms);
  const double useful = (m * n) / (m_pad * n_pad);
  return std::clamp(gpu.max_matmul_efficiency(precision) * padded * useful, 1e-6, 1.0);
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
