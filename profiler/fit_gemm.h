// Fit of the GEMM time model of core/gemm_efficiency.h to measured GEMMs:
//   t = max(launch, 2MNK / (P_p * f), bytes / bandwidth),
//   f = M/(M+m_half) * N/(N+n_half) * K/(K+k_half) * wave(M, N)
// with one asymptotic throughput P_p per precision (= peak * e_max) and shape parameters
// m_half, n_half, k_half and the launch overhead shared by all precisions. Levenberg-Marquardt
// on the relative error over log-parameters (which keeps them positive), numeric derivatives,
// several starting points. Wave quantisation uses the device's sm_count and the default
// tile (0 SMs on a CPU: no waves). Tested in tests/profiler/fit_test.cpp on synthetic data.
#pragma once

#include <string>
#include <vector>

#include "core/gemm_efficiency.h"

namespace parplan::profiler {

struct GemmPoint {
  GemmShape shape;
  int precision = 0;  // index into GemmFitInput::precisions
  double time_s = 0;
};

struct GemmFitInput {
  std::vector<std::string> precisions;  // names, e.g. {"bf16", "fp8"} or {"fp32"}
  std::vector<double> element_bytes;    // per precision (fp64 8, fp32 4, bf16 2, fp8 1)
  std::vector<GemmPoint> points;
  double memory_bandwidth_gbps = 0;  // achievable; the memory-bound floor of the model
  int64_t sm_count = 0;
  int64_t tile_m = 128;
  int64_t tile_n = 256;
};

struct GemmModel {
  std::vector<double> throughput_tflops;  // P per precision
  double m_half = 0;
  double n_half = 0;
  double k_half = 0;
  double launch_us = 0;
};

struct GemmFitResult {
  GemmModel model;
  double rms_relative_error = 0;
  double max_relative_error = 0;
  int points = 0;
  int iterations = 0;
  // Points whose time is the launch floor: with none, launch_us is only an upper bound.
  int launch_bound_points = 0;
};

// Time of one point under a model: the formula of core/gemm_efficiency.h (efficiency from
// parplan::gemm_efficiency itself) with the point's element size.
double gemm_model_time_s(const GemmModel& model, const GemmFitInput& input, const GemmPoint& p);

GemmFitResult fit_gemm_model(const GemmFitInput& input);

}  // namespace parplan::profiler
