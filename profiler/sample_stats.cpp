#include "profiler/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace parplan::profiler {

double median(std::span<const double> values) {
  if (values.empty()) return 0.0;
  std::vector<double> sorted(values.begin(), values.end());
  const std::size_t mid = sorted.size() / 2;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid), sorted.end());
  const double upper = sorted[mid];
  if (sorted.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

double mean(std::span<const double> values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stdev(std::span<const double> values) {
  if (values.size() < 2) return 0.0;
  const double m = mean(values);
  double sum = 0.0;
  for (double v : values) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double median_absolute_deviation(std::span<const double> values) {
  if (values.empty()) return 0.0;
  const double m = median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::abs(v - m));
  return median(deviations);
}

const char* to_string(NoiseEstimator estimator) {
  return estimator == NoiseEstimator::MadOverMedian ? "mad/median" : "stdev/median";
}

double relative_noise(std::span<const double> values, NoiseEstimator estimator) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  if (values.size() < 2) return kInfinity;
  const double m = median(values);
  if (m <= 0.0) return kInfinity;
  // 1.4826 makes the MAD a consistent estimator of the standard deviation of normal samples.
  constexpr double kMadToSigma = 1.4826;
  const double spread = estimator == NoiseEstimator::MadOverMedian
                            ? kMadToSigma * median_absolute_deviation(values)
                            : stdev(values);
  return spread / m;
}

}  // namespace parplan::profiler
