// Summary statistics of timing samples: median, mean, standard deviation, median absolute
// deviation, and the relative noise estimates the stopping rule uses. Pure functions.
// Tested in tests/profiler/stopping_rule_test.cpp.
#pragma once

#include <span>
#include <string_view>

namespace parplan::profiler {

double median(std::span<const double> values);
double mean(std::span<const double> values);
// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
double stdev(std::span<const double> values);
// Median of |x - median|; 0 for an empty list.
double median_absolute_deviation(std::span<const double> values);

// How the relative noise of a set of samples is estimated.
enum class NoiseEstimator {
  StdevOverMedian,  // stdev / median (nvbench's "stdrel" uses stdev / mean)
  MadOverMedian,    // 1.4826 * MAD / median: the same for normal samples, robust to outliers
};
const char* to_string(NoiseEstimator estimator);

// Relative noise of the samples; infinity for fewer than two samples or a zero median.
double relative_noise(std::span<const double> values, NoiseEstimator estimator);

}  // namespace parplan::profiler
