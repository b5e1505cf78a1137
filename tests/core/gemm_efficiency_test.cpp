// The GEMM time model (core/gemm_efficiency.h) against its closed forms.
#include "core/gemm_efficiency.h"

#include <gtest/gtest.h>

namespace parplan {
namespace {

// A GPU whose shape terms are switched off unless a test sets them: efficiency is the MAMF
// fraction alone, so each term can be checked by itself.
GpuSpec plain_gpu() {
  GpuSpec gpu;
  gpu.dense_tflops[static_cast<int>(Precision::Bf16)] = 1000;
  gpu.matmul_efficiency[static_cast<int>(Precision::Bf16)] = 0.8;
  gpu.sustained_clock_fraction = 0.9;
  gpu.hbm_bandwidth_gbps = 2000;
  gpu.hbm_efficiency = 0.9;
  gpu.kernel_launch_us = 4;
  gpu.gemm_m_half = 0;
  gpu.gemm_n_half = 0;
  gpu.gemm_k_half = 0;
  gpu.sm_count = 0;  // no waves
  return gpu;
}

TEST(GemmEfficiency, LargeShapesApproachTheMeasuredMaximum) {
  // With the default half sizes (64, 64, 128) an 8192^3 GEMM loses 0.8% per m and n and 1.5%
  // for k: 0.8 * (8192/8256)^2 * (8192/8320).
  GpuSpec gpu = plain_gpu();
  const GpuSpec defaults;
  gpu.gemm_m_half = defaults.gemm_m_half;
  gpu.gemm_n_half = defaults.gemm_n_half;
  gpu.gemm_k_half = defaults.gemm_k_half;
  const double e = gemm_efficiency(gpu, {8192, 8192, 8192}, Precision::Bf16);
  EXPECT_NEAR(e, 0.8 * (8192.0 / 8256) * (8192.0 / 8256) * (8192.0 / 8320), 1e-12);
  EXPECT_LT(e, 0.8);
  EXPECT_GT(gemm_efficiency(gpu, {16384, 16384, 16384}, Precision::Bf16), e);
}

// A precision the GPU has no peak for runs on its 16-bit tensor cores (bf16, then fp16), and
// a CPU node with an fp32 peak only computes everything in fp32 (GpuSpec::computed_as).
TEST(GemmEfficiency, APrecisionWithoutAPeakRunsAtTheSixteenBitRate) {
  GpuSpec volta = plain_gpu();
  volta.dense_tflops[static_cast<int>(Precision::Bf16)] = 0;
  volta.dense_tflops[static_cast<int>(Precision::Fp16)] = 125;
  volta.dense_tflops[static_cast<int>(Precision::Fp32)] = 15.6;
  volta.matmul_efficiency[static_cast<int>(Precision::Fp16)] = 0.8;
  EXPECT_EQ(volta.computed_as(Precision::Bf16), Precision::Fp16);
  EXPECT_EQ(volta.computed_as(Precision::Fp8), Precision::Fp16);
  EXPECT_EQ(volta.computed_as(Precision::Fp32), Precision::Fp32);
  const GemmShape s{8192, 8192, 8192};
  const double compute_s = 2.0 * 8192 * 8192 * 8192 / (125e12 * 0.9 * 0.8);
  EXPECT_NEAR(gemm_time_s(volta, s, Precision::Fp16), compute_s, 1e-12);

  GpuSpec cpu;
  cpu.dense_tflops[static_cast<int>(Precision::Fp32)] = 0.002;
  EXPECT_EQ(cpu.computed_as(Precision::Bf16), Precision::Fp32);
  EXPECT_EQ(cpu.computed_as(Precision::Fp8), Precision::Fp32);
}

TEST(GemmEfficiency, ADimensionAtItsHalfValueHalvesTheThroughput) {
  GpuSpec gpu = plain_gpu();
  gpu.gemm_m_half = 64;
  EXPECT_NEAR(gemm_efficiency(gpu, {64, 8192, 8192}, Precision::Bf16), 0.4, 1e-12);
  gpu.gemm_k_half = 128;
  EXPECT_NEAR(gemm_efficiency(gpu, {64, 8192, 128}, Precision::Bf16), 0.2, 1e-12);
}

TEST(GemmEfficiency, APrecisionWithItsOwnRampsUsesThemAndOnlyIt) {
  // A CUDA profile's fp32 GEMMs (CUDA cores) fill the machine unlike its bf16 tensor-core ones:
  // fp32 at its own k_half of 256 runs a 256-deep GEMM at half its maximum; bf16 keeps the node's.
  GpuSpec gpu = plain_gpu();
  gpu.dense_tflops[static_cast<int>(Precision::Fp32)] = 60;
  gpu.matmul_efficiency[static_cast<int>(Precision::Fp32)] = 0.75;
  gpu.gemm_ramps_by_precision[static_cast<int>(Precision::Fp32)] = {1e-9, 1e-9, 256};
  EXPECT_NEAR(gemm_efficiency(gpu, {4096, 4096, 256}, Precision::Fp32), 0.75 * 0.5, 1e-9);
  EXPECT_NEAR(gemm_efficiency(gpu, {4096, 4096, 256}, Precision::Bf16), 0.8, 1e-12);
  // m_half <= 0: the node's ramps.
  gpu.gemm_ramps_by_precision[static_cast<int>(Precision::Fp32)] = {};
  EXPECT_NEAR(gemm_efficiency(gpu, {4096, 4096, 256}, Precision::Fp32), 0.75, 1e-12);
}

TEST(GemmEfficiency, TheLastWaveOfTilesLeavesProcessorsIdle) {
  // Five 128x128 tiles on four processors run in two waves: 5 / 8 of the machine is used.
  GpuSpec gpu = plain_gpu();
  gpu.sm_count = 4;
  gpu.gemm_tile_m = 128;
  gpu.gemm_tile_n = 128;
  EXPECT_NEAR(gemm_efficiency(gpu, {5 * 128, 128, 4096}, Precision::Bf16), 0.8 * 5.0 / 8.0, 1e-12);
  // Four tiles fill one wave exactly; a partial tile costs a whole one (tile quantization):
  // 513 rows take as long as 640, two waves, of which 513 / 640 of the fifth tile's rows and
  // 5 of 8 processor slots are useful.
  EXPECT_NEAR(gemm_efficiency(gpu, {4 * 128, 128, 4096}, Precision::Bf16), 0.8, 1e-12);
  EXPECT_NEAR(gemm_efficiency(gpu, {4 * 128 + 1, 128, 4096}, Precision::Bf16),
              0.8 * 5.0 / 8.0 * 513.0 / 640.0, 1e-12);
  EXPECT_NEAR(gemm_time_s(gpu, {4 * 128 + 1, 128, 4096}, Precision::Bf16),
              gemm_time_s(gpu, {5 * 128, 128, 4096}, Precision::Bf16), 1e-15);
}

TEST(GemmEfficiency, FewTilesSplitTheirDepthOverIdleProcessors) {
  // One 128 x 128 tile on four processors: split-K runs four 1024-deep slices side by side,
  // so the machine is full; with K = 256 a slice cannot be shallower than 256 and one
  // processor works alone.
  GpuSpec gpu = plain_gpu();
  gpu.sm_count = 4;
  gpu.gemm_tile_m = 128;
  gpu.gemm_tile_n = 128;
  EXPECT_NEAR(gemm_efficiency(gpu, {128, 128, 4096}, Precision::Bf16), 0.8, 1e-12);
  EXPECT_NEAR(gemm_efficiency(gpu, {128, 128, 256}, Precision::Bf16), 0.8 / 4, 1e-12);
  // Two tiles split in two each: full again.
  EXPECT_NEAR(gemm_efficiency(gpu, {256, 128, 4096}, Precision::Bf16), 0.8, 1e-12);
}

TEST(GemmEfficiency, NarrowShapesUseNarrowTiles) {
  // A 32- or 40-wide output is computed in tiles of its own width, not padded to the full
  // 128: no padding waste, only the small dimension's ramp (n_half).
  GpuSpec gpu = plain_gpu();
  gpu.sm_count = 1;
  gpu.gemm_tile_m = 128;
  gpu.gemm_tile_n = 128;
  gpu.gemm_n_half = 32;
  EXPECT_NEAR(gemm_efficiency(gpu, {128, 32, 4096}, Precision::Bf16), 0.8 * 32.0 / 64.0, 1e-12);
  EXPECT_NEAR(gemm_efficiency(gpu, {128, 40, 4096}, Precision::Bf16), 0.8 * 40.0 / 72.0, 1e-12);
}

TEST(GemmTime, ComputeBoundAtTheSustainedClock) {
  const GpuSpec gpu = plain_gpu();
  const GemmShape shape{8192, 8192, 8192};
  const double expected = 2.0 * 8192 * 8192 * 8192 / (1000e12 * 0.9 * 0.8);
  EXPECT_NEAR(gemm_time_s(gpu, shape, Precision::Bf16), expected, 1e-9 * expected);
  EXPECT_DOUBLE_EQ(gemm_flops(shape), 2.0 * 8192 * 8192 * 8192);
}

TEST(GemmTime, SkinnyShapesAreBoundByMemoryAndTinyOnesByTheLaunch) {
  const GpuSpec gpu = plain_gpu();
  // m = 1: a matrix-vector product reads the whole 8192 x 8192 operand.
  const GemmShape gemv{1, 8192, 8192};
  const double bytes = (1.0 * 8192 + 8192.0 * 8192 + 1.0 * 8192) * 2;
  EXPECT_NEAR(gemm_time_s(gpu, gemv, Precision::Bf16), bytes / (2000e9 * 0.9), 1e-15);
  EXPECT_DOUBLE_EQ(gemm_time_s(gpu, {8, 8, 8}, Precision::Bf16), 4e-6);
  EXPECT_DOUBLE_EQ(gemm_time_s(gpu, {0, 8, 8}, Precision::Bf16), 0.0);
}

TEST(GemmTime, OperandBytesFollowThePrecision) {
  EXPECT_DOUBLE_EQ(gemm_element_bytes(Precision::Fp8), 1.0);
  EXPECT_DOUBLE_EQ(gemm_element_bytes(Precision::Bf16), 2.0);
  EXPECT_DOUBLE_EQ(gemm_element_bytes(Precision::Fp16), 2.0);
  EXPECT_DOUBLE_EQ(gemm_element_bytes(Precision::Fp32), 4.0);
}

}  // namespace
}  // namespace parplan
