// The GEMM time model shared by the profiler (which fits its parameters to measurements) and
// the cost model (which predicts with them):
//   t = max(launch, 2MNK / (peak * c * e_max * f), bytes / (hbm * hbm_efficiency))
//   f = M*N/(Mp*Np) * M/(M + m_half) * N/(N + n_half) * Ks/(Ks + k_half) * fill
//   Mp, Np = M, N rounded up to whole tiles of tm x tn = min(tile_m, M) x min(tile_n, N)
//   (libraries run narrow tiles for skinny shapes, whose under-fill the ramps price)
//   fill = tiles / (ceil(tiles / sm_count) * sm_count), tiles = Mp/tm * Np/tn * batch * splits
//   splits = min(floor(sm_count / output tiles), floor(K / 256)), at least 1: with fewer
//   output tiles than processors the library splits K (split-K / stream-K); Ks = K / splits
// A partial tile costs a whole one (tile quantization) and
// the last wave of tiles leaves processors idle (wave quantization, NVIDIA "Matrix
// Multiplication Background User's Guide"); small dimensions under-fill pipelines (the *_half
// terms). Time follows whole waves of whole tiles. e_max is the measured maximum achievable matmul
// fraction (MAMF), c the sustained clock fraction of a long, power-limited run
// (GpuSpec::sustained_clock_fraction). A kernel never takes less than the launch interval: launches
// are asynchronous, so the host only limits kernels shorter than it. Tested in
// tests/core/gemm_efficiency_test.cpp.
#pragma once

#include <cstdint>

#include "core/cluster_spec.h"

namespace parplan {

struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;  // independent GEMMs of the same shape in one launch (batched GEMM)
};

// Fraction of dense peak the shape reaches (e_max * f), in (0, 1].
double gemm_efficiency(const GpuSpec& gpu, const GemmShape& shape, Precision precision);

// Seconds for one (batched) GEMM: at least the launch interval.
double gemm_time_s(const GpuSpec& gpu, const GemmShape& shape, Precision precision);

double gemm_flops(const GemmShape& shape);

// Element size of GEMM operands: fp8 1, fp16/bf16 2, fp32 4.
double gemm_element_bytes(Precision precision);

}  // namespace parplan
