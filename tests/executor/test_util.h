// Helpers for the executor tests: deterministic random vectors and a finite-difference check.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "executor/deterministic_random.h"

namespace parplan::executor::testing {

inline std::vector<double> random_vector(int64_t n, uint64_t seed, double scale = 1.0) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * hash_normal(seed, 77, static_cast<uint64_t>(i));
  return v;
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Central differences of `loss` at x for every `stride`-th element, against `grad`.
inline void expect_gradient(const std::function<double(const std::vector<double>&)>& loss,
                            std::vector<double> x, const std::vector<double>& grad,
                            double tolerance = 1e-6, int64_t stride = 1, double eps = 1e-6) {
  ASSERT_EQ(x.size(), grad.size());
  for (std::size_t i = 0; i < x.size(); i += stride) {
    const double saved = x[i];
    x[i] = saved + eps;
    const double up = loss(x);
    x[i] = saved - eps;
    const double down = loss(x);
    x[i] = saved;
    const double numeric = (up - down) / (2 * eps);
    EXPECT_NEAR(grad[i], numeric, tolerance * std::max(1.0, std::abs(numeric))) << "element " << i;
  }
}

}  // namespace parplan::executor::testing
