#include "profiler/fit_gemm.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/units.h"

namespace parplan::profiler {

namespace {

// Parameter vector: log P_p (TFLOP/s) for each precision, then log m_half, log n_half,
// log k_half, log launch_us.
int num_params(const GemmFitInput& in) { return static_cast<int>(in.precisions.size()) + 4; }

GemmModel unpack(const Eigen::VectorXd& theta, const GemmFitInput& in) {
  GemmModel m;
  const auto p = static_cast<Eigen::Index>(in.precisions.size());
  for (Eigen::Index i = 0; i < p; ++i) m.throughput_tflops.push_back(std::exp(theta(i)));
  m.m_half = std::exp(theta(p));
  m.n_half = std::exp(theta(p + 1));
  m.k_half = std::exp(theta(p + 2));
  m.launch_us = std::exp(theta(p + 3));
  return m;
}

// Bounds in log space: halves in [1e-3, 1e6] elements, launch in [1e-4, 1e5] us.
void clamp_params(Eigen::VectorXd& theta, const GemmFitInput& in) {
  const auto p = static_cast<Eigen::Index>(in.precisions.size());
  for (Eigen::Index i = 0; i < p; ++i)
    theta(i) = std::clamp(theta(i), std::log(1e-9), std::log(1e9));
  for (Eigen::Index i = p; i < p + 3; ++i)
    theta(i) = std::clamp(theta(i), std::log(1e-3), std::log(1e6));
  theta(p + 3) = std::clamp(theta(p + 3), std::log(1e-4), std::log(1e5));
}

Eigen::VectorXd residuals(const Eigen::VectorXd& theta, const GemmFitInput& in) {
  const GemmModel model = unpack(theta, in);
  Eigen::VectorXd r(static_cast<Eigen::Index>(in.points.size()));
  for (std::size_t i = 0; i < in.points.size(); ++i) {
    const auto& p = in.points[i];
    r(static_cast<Eigen::Index>(i)) = gemm_model_time_s(model, in, p) / p.time_s - 1.0;
  }
  return r;
}

struct LmResult {
  Eigen::VectorXd theta;
  double cost = std::numeric_limits<double>::infinity();
  int iterations = 0;
};

// Levenberg-Marquardt with Marquardt's diagonal scaling and central-difference Jacobian.
LmResult levenberg_marquardt(Eigen::VectorXd theta, const GemmFitInput& in) {
  clamp_params(theta, in);
  Eigen::VectorXd r = residuals(theta, in);
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  const Eigen::Index n = theta.size();
  int iteration = 0;
  bool converged = false;
  for (; iteration < 200 && !converged; ++iteration) {
    Eigen::MatrixXd jacobian(r.size(), n);
    constexpr double kStep = 1e-6;
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd up = theta;
      Eigen::VectorXd down = theta;
      up(j) += kStep;
      down(j) -= kStep;
      jacobian.col(j) = (residuals(up, in) - residuals(down, in)) / (2 * kStep);
    }
    const Eigen::MatrixXd jtj = jacobian.transpose() * jacobian;
    const Eigen::VectorXd gradient = jacobian.transpose() * r;
    if (gradient.lpNorm<Eigen::Infinity>() < 1e-14) break;
    bool improved = false;
    for (int attempt = 0; attempt < 20 && !improved; ++attempt) {
      Eigen::MatrixXd a = jtj;
      for (Eigen::Index j = 0; j < n; ++j) a(j, j) += lambda * (jtj(j, j) + 1e-12);
      Eigen::VectorXd candidate = theta - a.ldlt().solve(gradient);
      clamp_params(candidate, in);
      const Eigen::VectorXd rc = residuals(candidate, in);
      const double cc = rc.squaredNorm();
      if (std::isfinite(cc) && cc < cost) {
        const double gain = cost - cc;
        theta = candidate;
        r = rc;
        cost = cc;
        lambda = std::max(lambda / 3.0, 1e-12);
        improved = true;
        converged = gain < 1e-15 * (1.0 + cost);
      } else {
        lambda *= 4.0;
      }
    }
    if (!improved) break;
  }
  return {theta, cost, iteration};
}

}  // namespace

double gemm_model_time_s(const GemmModel& model, const GemmFitInput& in, const GemmPoint& p) {
  GpuSpec gpu;
  gpu.gemm_m_half = model.m_half;
  gpu.gemm_n_half = model.n_half;
  gpu.gemm_k_half = model.k_half;
  gpu.sm_count = in.sm_count;
  gpu.gemm_tile_m = in.tile_m;
  gpu.gemm_tile_n = in.tile_n;
  gpu.matmul_efficiency.fill(1.0);  // gemm_efficiency then returns the shape factor f alone
  const double f = gemm_efficiency(gpu, p.shape, Precision::Bf16);
  const double compute_s =
      gemm_flops(p.shape) /
      (model.throughput_tflops[static_cast<std::size_t>(p.precision)] * kTera * f);
  const double m = static_cast<double>(p.shape.m);
  const double n = static_cast<double>(p.shape.n);
  const double k = static_cast<double>(p.shape.k);
  const double bytes = (m * k + k * n + m * n) *
                       in.element_bytes[static_cast<std::size_t>(p.precision)] *
                       static_cast<double>(p.shape.batch);
  const double memory_s =
      in.memory_bandwidth_gbps > 0 ? bytes / (in.memory_bandwidth_gbps * kGB) : 0.0;
  return std::max({model.launch_us * kUs, compute_s, memory_s});
}

GemmFitResult fit_gemm_model(const GemmFitInput& in) {
  PARPLAN_CHECK(!in.precisions.empty() && in.element_bytes.size() == in.precisions.size(),
                "GEMM fit needs precisions with their element sizes");
  const int params = num_params(in);
  PARPLAN_CHECK(static_cast<int>(in.points.size()) >= params, "GEMM fit needs at least ", params,
                " measured shapes, got ", in.points.size());
  // Starting points: the best measured throughput per precision; a grid of halves; a launch
  // floor a tenth of, or equal to, the fastest measurement.
  const auto p = static_cast<Eigen::Index>(in.precisions.size());
  std::vector<double> best_tflops(in.precisions.size(), 0.0);
  double fastest_s = std::numeric_limits<double>::infinity();
  for (const auto& point : in.points) {
    PARPLAN_CHECK(point.time_s > 0, "GEMM measurement with a non-positive time");
    auto& best = best_tflops[static_cast<std::size_t>(point.precision)];
    best = std::max(best, gemm_flops(point.shape) / point.time_s / kTera);
    fastest_s = std::min(fastest_s, point.time_s);
  }
  for (std::size_t i = 0; i < best_tflops.size(); ++i) {
    PARPLAN_CHECK(best_tflops[i] > 0, "GEMM fit: no measurement for precision ", in.precisions[i]);
  }
  LmResult best;
  // The launch floor only has a gradient where it binds, so it starts both below and at the
  // fastest measurement.
  for (double launch_fraction : {0.1, 1.0}) {
    for (double mh : {1.0, 16.0, 256.0}) {
      for (double nh : {1.0, 16.0, 256.0}) {
        for (double kh : {1.0, 16.0, 256.0}) {
          Eigen::VectorXd theta(params);
          for (Eigen::Index i = 0; i < p; ++i) {
            theta(i) = std::log(best_tflops[static_cast<std::size_t>(i)] * 1.1);
          }
          theta(p) = std::log(mh);
          theta(p + 1) = std::log(nh);
          theta(p + 2) = std::log(kh);
          theta(p + 3) = std::log(std::max(fastest_s * kUsPerS * launch_fraction, 1e-3));
          LmResult run = levenberg_marquardt(theta, in);
          if (run.cost < best.cost) best = run;
        }
      }
    }
  }
  GemmFitResult result;
  result.model = unpack(best.theta, in);
  result.iterations = best.iterations;
  const Eigen::VectorXd r = residuals(best.theta, in);
  result.points = static_cast<int>(r.size());
  result.rms_relative_error = std::sqrt(r.squaredNorm() / static_cast<double>(r.size()));
  result.max_relative_error = r.cwiseAbs().maxCoeff();
  for (const auto& point : in.points) {
    GemmModel without_launch = result.model;
    without_launch.launch_us = 0;
    if (gemm_model_time_s(without_launch, in, point) < result.model.launch_us * kUs) {
      ++result.launch_bound_points;
    }
  }
  return result;
}

}  // namespace parplan::profiler
