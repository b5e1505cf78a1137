// Unit tests of the fits on synthetic data with known parameters: collectives (one line,
// piecewise regimes, bus-factor conversion) and the GEMM model (shape parameters, launch,
// several precisions, waves), each recovered within 1 %.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/check.h"
#include "core/hardware_profile.h"
#include "profiler/fit_collective.h"
#include "profiler/fit_gemm.h"
#include "profiler/gemm_shapes.h"

namespace parplan::profiler {
namespace {

std::vector<CollectivePoint> line_points(double latency_s, double seconds_per_byte, double from,
                                         double to) {
  std::vector<CollectivePoint> points;
  for (double s = from; s <= to; s *= 2) points.push_back({s, latency_s + seconds_per_byte * s});
  return points;
}

TEST(FitCollective, RecoversLatencyAndBandwidthExactly) {
  const auto points = line_points(12e-6, 1.0 / 50e9, 8, 1 << 30);
  const LineFit fit = fit_line(points);
  EXPECT_NEAR(fit.latency_s / 12e-6, 1.0, 0.01);
  EXPECT_NEAR(fit.seconds_per_byte * 50e9, 1.0, 0.01);
  EXPECT_LT(fit.rms_relative_error, 1e-6);
}

TEST(FitCollective, RecoversThroughNoise) {
  auto points = line_points(5e-6, 1.0 / 20e9, 8, 1 << 28);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-0.02, 0.02);
  for (auto& p : points) p.time_s *= 1 + jitter(rng);
  const LineFit fit = fit_line(points);
  EXPECT_NEAR(fit.latency_s / 5e-6, 1.0, 0.03);
  EXPECT_NEAR(fit.seconds_per_byte * 20e9, 1.0, 0.03);
  EXPECT_LT(fit.rms_relative_error, 0.02);
}

TEST(FitCollective, ConstrainsNegativeLatencyToZero) {
  // Pure bandwidth with a slight curvature that would pull an unconstrained intercept below 0.
  std::vector<CollectivePoint> points;
  for (double s = 1e6; s <= 1e9; s *= 2)
    points.push_back({s, s / 1e10 * (1 + 0.02 * std::log2(s / 1e6))});
  const LineFit fit = fit_line(points);
  EXPECT_GE(fit.latency_s, 0.0);
  EXPECT_GT(fit.seconds_per_byte, 0.0);
}

TEST(FitCollective, SplitsTwoRegimesAtTheRightSize) {
  // Small messages: 2 us + 1/5 GB/s; from 64 KiB: 20 us + 1/25 GB/s (a protocol switch).
  std::vector<CollectivePoint> points = line_points(2e-6, 1.0 / 5e9, 8, 32768);
  const auto large = line_points(20e-6, 1.0 / 25e9, 65536, 1 << 28);
  points.insert(points.end(), large.begin(), large.end());
  const auto fits = fit_segments(points);
  ASSERT_EQ(fits.size(), 2u);
  EXPECT_DOUBLE_EQ(fits[0].min_size_bytes, 0.0);
  EXPECT_NEAR(fits[0].max_size_bytes, std::sqrt(32768.0 * 65536.0), 1.0);
  EXPECT_DOUBLE_EQ(fits[1].min_size_bytes, fits[0].max_size_bytes);
  EXPECT_DOUBLE_EQ(fits[1].max_size_bytes, 0.0);
  EXPECT_NEAR(fits[0].latency_s / 2e-6, 1.0, 0.01);
  EXPECT_NEAR(fits[0].seconds_per_byte * 5e9, 1.0, 0.01);
  EXPECT_NEAR(fits[1].latency_s / 20e-6, 1.0, 0.01);
  EXPECT_NEAR(fits[1].seconds_per_byte * 25e9, 1.0, 0.01);
}

TEST(FitCollective, OneLineWhenOneIsEnough) {
  const auto fits = fit_segments(line_points(3e-6, 1.0 / 40e9, 8, 1 << 26));
  EXPECT_EQ(fits.size(), 1u);
}

TEST(FitCollective, BusFactorConversionAndLookup) {
  // An all-reduce over 4 ranks at busbw 100 GB/s and 10 us: t = 10 us + S * 1.5 / 100e9.
  std::vector<CollectiveRecord> records;
  for (double s = 8; s <= (1 << 30); s *= 4) {
    CollectiveRecord r;
    r.op = Collective::AllReduce;
    r.group_size = 4;
    r.span = "intra_node";
    r.size_bytes = s;
    r.time.median_s = collective_time_s(Collective::AllReduce, 4, s, 10.0, 100.0);
    records.push_back(r);
  }
  const auto fits = fit_collectives(records);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].op, "all_reduce");
  EXPECT_EQ(fits[0].group_size, 4);
  EXPECT_NEAR(fits[0].busbw_gbps / 100.0, 1.0, 0.01);
  EXPECT_NEAR(fits[0].latency_us / 10.0, 1.0, 0.01);
  for (const auto& r : records) EXPECT_NEAR(relative_error(fits, r), 0.0, 1e-6);
}

GemmFitInput synthetic_gemm_input(const GemmModel& truth, std::vector<std::string> precisions,
                                  int64_t sm_count) {
  GemmFitInput in;
  in.precisions = precisions;
  for (const auto& p : precisions) in.element_bytes.push_back(p == "fp8" ? 1.0 : 2.0);
  in.memory_bandwidth_gbps = 3000;
  in.sm_count = sm_count;
  for (std::size_t p = 0; p < precisions.size(); ++p) {
    for (const auto& shape : gpu_gemm_shapes(true)) {
      GemmPoint point{shape, static_cast<int>(p), 0.0};
      point.time_s = gemm_model_time_s(truth, in, point);
      in.points.push_back(point);
    }
  }
  return in;
}

void expect_recovered(const GemmModel& fitted, const GemmModel& truth) {
  for (std::size_t i = 0; i < truth.throughput_tflops.size(); ++i) {
    EXPECT_NEAR(fitted.throughput_tflops[i] / truth.throughput_tflops[i], 1.0, 0.01) << i;
  }
  EXPECT_NEAR(fitted.m_half / truth.m_half, 1.0, 0.01);
  EXPECT_NEAR(fitted.n_half / truth.n_half, 1.0, 0.01);
  EXPECT_NEAR(fitted.k_half / truth.k_half, 1.0, 0.01);
  EXPECT_NEAR(fitted.launch_us / truth.launch_us, 1.0, 0.01);
}

TEST(FitGemm, RecoversTheModelOfOnePrecision) {
  const GemmModel truth{{700.0}, 48.0, 96.0, 160.0, 6.0};
  const GemmFitInput in = synthetic_gemm_input(truth, {"bf16"}, 0);
  const GemmFitResult fit = fit_gemm_model(in);
  expect_recovered(fit.model, truth);
  EXPECT_LT(fit.rms_relative_error, 1e-4);
}

TEST(FitGemm, RecoversSeveralPrecisionsWithWaves) {
  const GemmModel truth{{780.0, 1350.0}, 64.0, 64.0, 128.0, 5.0};
  const GemmFitInput in = synthetic_gemm_input(truth, {"bf16", "fp8"}, 132);
  const GemmFitResult fit = fit_gemm_model(in);
  expect_recovered(fit.model, truth);
  EXPECT_LT(fit.max_relative_error, 1e-3);
}

TEST(FitGemm, ModelIsCoreGemmTimeFormula) {
  // The fit's model must be core/gemm_efficiency.h's, which the cost model predicts with.
  GemmFitInput in;
  in.precisions = {"fp32"};
  in.element_bytes = {4.0};
  in.memory_bandwidth_gbps = 20.0;
  const GemmModel model{{0.04}, 3.0, 5.0, 7.0, 0.8};
  GpuSpec gpu;
  gpu.dense_tflops[static_cast<int>(Precision::Fp32)] = 0.04;
  gpu.matmul_efficiency.fill(1.0);
  gpu.gemm_m_half = 3.0;
  gpu.gemm_n_half = 5.0;
  gpu.gemm_k_half = 7.0;
  gpu.kernel_launch_us = 0.8;
  gpu.sm_count = 0;
  gpu.hbm_bandwidth_gbps = 20.0;
  gpu.hbm_efficiency = 1.0;
  for (const auto& shape : cpu_gemm_shapes(true)) {
    const GemmPoint point{shape, 0, 1.0};
    EXPECT_NEAR(gemm_model_time_s(model, in, point) / gemm_time_s(gpu, shape, Precision::Fp32), 1.0,
                1e-12)
        << to_string(shape);
  }
}

TEST(FitGemm, NeedsEnoughShapes) {
  GemmFitInput in;
  in.precisions = {"fp32"};
  in.element_bytes = {4.0};
  in.points = {{{64, 64, 64, 1}, 0, 1e-5}};
  EXPECT_THROW(fit_gemm_model(in), Error);
}

}  // namespace
}  // namespace parplan::profiler
