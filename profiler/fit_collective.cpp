#include "profiler/fit_collective.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "core/check.h"
#include "core/hardware_profile.h"
#include "core/units.h"

namespace parplan::profiler {

namespace {

// busbw may not exceed what the node schema allows (1e7 GB/s): a line through points whose
// time does not grow with size gets the smallest slope that still parses.
constexpr double kMinSecondsPerByte = 1e-16;

void score(LineFit& fit, std::span<const CollectivePoint> points) {
  double sum = 0.0;
  double worst = 0.0;
  for (const auto& p : points) {
    const double e = (fit.latency_s + fit.seconds_per_byte * p.size_bytes) / p.time_s - 1.0;
    sum += e * e;
    worst = std::max(worst, std::abs(e));
  }
  fit.points = static_cast<int>(points.size());
  fit.rms_relative_error =
      points.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(points.size()));
  fit.max_relative_error = worst;
}

double sum_squared_relative(const LineFit& fit, std::span<const CollectivePoint> points) {
  double sum = 0.0;
  for (const auto& p : points) {
    const double e = (fit.latency_s + fit.seconds_per_byte * p.size_bytes) / p.time_s - 1.0;
    sum += e * e;
  }
  return sum;
}

}  // namespace

LineFit fit_line(std::span<const CollectivePoint> points) {
  PARPLAN_CHECK(!points.empty(), "no collective measurements to fit");
  for (const auto& p : points) {
    PARPLAN_CHECK(p.time_s > 0 && p.size_bytes > 0, "collective measurement with size ",
                  p.size_bytes, " and time ", p.time_s, " cannot be fitted");
  }
  LineFit fit;
  // Residual (a + b S) / t - 1 = a x + b y - 1 with x = 1/t, y = S/t: linear least squares.
  const auto n = static_cast<Eigen::Index>(points.size());
  Eigen::MatrixXd design(n, 2);
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    design(i, 0) = 1.0 / points[static_cast<std::size_t>(i)].time_s;
    design(i, 1) =
        points[static_cast<std::size_t>(i)].size_bytes / points[static_cast<std::size_t>(i)].time_s;
  }
  // Column scaling keeps the 2x2 problem well conditioned (x ~ 1e5, y ~ 1e10).
  const Eigen::Vector2d scale(design.col(0).norm(), design.col(1).norm());
  Eigen::MatrixXd scaled = design;
  scaled.col(0) /= scale(0);
  scaled.col(1) /= scale(1);
  Eigen::Vector2d solution = scaled.colPivHouseholderQr().solve(ones);
  double a = solution(0) / scale(0);
  double b = solution(1) / scale(1);
  if (n < 2 || !(a >= 0) || !(b > 0)) {
    // Constrained cases: a = 0 (bandwidth only) or b at its floor (latency only); keep the
    // better one.
    const double b_only = design.col(1).dot(ones) / design.col(1).squaredNorm();
    LineFit bandwidth_only{0.0, std::max(b_only, kMinSecondsPerByte)};
    const double b_floor = kMinSecondsPerByte;
    const double a_only = std::max(
        0.0, design.col(0).dot(ones - b_floor * design.col(1)) / design.col(0).squaredNorm());
    LineFit latency_only{a_only, b_floor};
    const bool use_latency =
        sum_squared_relative(latency_only, points) < sum_squared_relative(bandwidth_only, points);
    a = use_latency ? latency_only.latency_s : bandwidth_only.latency_s;
    b = use_latency ? latency_only.seconds_per_byte : bandwidth_only.seconds_per_byte;
  }
  fit.latency_s = a;
  fit.seconds_per_byte = std::max(b, kMinSecondsPerByte);
  score(fit, points);
  return fit;
}

std::vector<LineFit> fit_segments(std::vector<CollectivePoint> points,
                                  const SegmentOptions& options) {
  PARPLAN_CHECK(!points.empty(), "no collective measurements to fit");
  std::sort(points.begin(), points.end(),
            [](const auto& a, const auto& b) { return a.size_bytes < b.size_bytes; });
  const int n = static_cast<int>(points.size());
  const int min_points = std::max(2, options.min_points_per_segment);
  const int max_segments = std::clamp(n / min_points, 1, std::max(1, options.max_segments));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // cost[i][j]: squared relative error of one line through points i..j.
  std::vector<std::vector<double>> cost(static_cast<std::size_t>(n),
                                        std::vector<double>(static_cast<std::size_t>(n), kInf));
  for (int i = 0; i < n; ++i) {
    for (int j = i + min_points - 1; j < n; ++j) {
      std::span<const CollectivePoint> part(points.data() + i, static_cast<std::size_t>(j - i + 1));
      cost[i][j] = sum_squared_relative(fit_line(part), part);
    }
  }
  // best[k][j]: least error of covering points 0..j with k+1 lines; from[k][j] start of the last.
  std::vector<std::vector<double>> best(static_cast<std::size_t>(max_segments),
                                        std::vector<double>(static_cast<std::size_t>(n), kInf));
  std::vector<std::vector<int>> from(static_cast<std::size_t>(max_segments),
                                     std::vector<int>(static_cast<std::size_t>(n), -1));
  for (int j = 0; j < n; ++j) {
    best[0][j] = cost[0][j];
    from[0][j] = 0;
  }
  for (int k = 1; k < max_segments; ++k) {
    for (int j = 0; j < n; ++j) {
      for (int i = 1; i <= j; ++i) {
        const double total = best[k - 1][i - 1] + cost[i][j];
        if (total < best[k][j]) {
          best[k][j] = total;
          from[k][j] = i;
        }
      }
    }
  }
  // The fewest lines that are good enough or close to the best.
  double best_rms = kInf;
  for (int k = 0; k < max_segments; ++k) {
    best_rms = std::min(best_rms, std::sqrt(best[k][n - 1] / n));
  }
  int chosen = max_segments - 1;
  for (int k = 0; k < max_segments; ++k) {
    const double rms = std::sqrt(best[k][n - 1] / n);
    if (std::isfinite(rms) &&
        (rms <= options.good_enough_rms || rms <= options.tolerance * best_rms)) {
      chosen = k;
      break;
    }
  }
  std::vector<std::pair<int, int>> ranges;
  for (int k = chosen, j = n - 1; k >= 0; --k) {
    const int i = from[k][j];
    ranges.insert(ranges.begin(), {i, j});
    j = i - 1;
  }
  std::vector<LineFit> fits;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    const auto [i, j] = ranges[r];
    std::span<const CollectivePoint> part(points.data() + i, static_cast<std::size_t>(j - i + 1));
    LineFit fit = fit_line(part);
    fit.min_size_bytes = r == 0 ? 0.0
                                : std::sqrt(points[static_cast<std::size_t>(i - 1)].size_bytes *
                                            points[static_cast<std::size_t>(i)].size_bytes);
    fit.max_size_bytes = r + 1 == ranges.size()
                             ? 0.0
                             : std::sqrt(points[static_cast<std::size_t>(j)].size_bytes *
                                         points[static_cast<std::size_t>(j + 1)].size_bytes);
    fits.push_back(fit);
  }
  return fits;
}

std::vector<CollectiveFit> fit_collectives(const std::vector<CollectiveRecord>& records,
                                           const SegmentOptions& options) {
  // Sizes whose every sample was disturbed (a rank lost its core) are left out while at
  // least two ranges' worth of others remain.
  using Key = std::tuple<int, std::string, int64_t>;
  std::map<Key, std::vector<CollectivePoint>> groups;
  std::map<Key, std::vector<CollectivePoint>> disturbed;
  for (const auto& r : records) {
    const Key key{static_cast<int>(r.op), r.span, r.group_size};
    (r.time.disturbed_only ? disturbed[key] : groups[key])
        .push_back({r.size_bytes, r.time.median_s});
  }
  for (auto& [key, points] : disturbed) {
    auto& kept = groups[key];
    if (static_cast<int>(kept.size()) < 2 * std::max(2, options.min_points_per_segment)) {
      kept.insert(kept.end(), points.begin(), points.end());
    }
  }
  std::vector<CollectiveFit> out;
  for (const auto& [key, points] : groups) {
    const auto& [op_index, span, group_size] = key;
    const auto op = static_cast<Collective>(op_index);
    const double factor = op == Collective::SendRecv ? 1.0 : bus_factor(op, group_size);
    for (const auto& line : fit_segments(points, options)) {
      CollectiveFit fit;
      fit.op = to_string(op);
      fit.span = span;
      fit.group_size = group_size;
      fit.latency_us = line.latency_s * kUsPerS;
      fit.busbw_gbps = factor / line.seconds_per_byte / kGB;
      fit.min_size_bytes = line.min_size_bytes;
      fit.max_size_bytes = line.max_size_bytes;
      fit.rms_relative_error = line.rms_relative_error;
      out.push_back(fit);
    }
  }
  return out;
}

double relative_error(const std::vector<CollectiveFit>& fits, const CollectiveRecord& record) {
  NodeSpec node;
  node.collective_fits = fits;
  const auto predicted =
      fitted_collective_time_s(node, record.op, record.span, record.group_size, record.size_bytes);
  PARPLAN_CHECK(predicted.has_value(), "no collective fit for ", to_string(record.op), " ",
                record.span);
  return *predicted / record.time.median_s - 1.0;
}

}  // namespace parplan::profiler
