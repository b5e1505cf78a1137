#include "cost_models/robust_fit.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace parplan::cost {

namespace {

// rho'(r) / r for z = r / c: the weight of a residual in the reweighted least squares.
double robust_weight(double z, RobustLoss kind) {
  return kind == RobustLoss::SoftL1 ? 1.0 / std::sqrt(1.0 + z * z) : 1.0 / (1.0 + z * z);
}

// Forward-difference step in parameter units (the parameters are logs of fractions or
// seconds scaled by a typical step: order one).
constexpr double kDifferenceStep = 1e-4;

// Solves the small symmetric system a x = b by Gaussian elimination with partial pivoting;
// a singular pivot leaves that unknown at zero.
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t row = col + 1; row < n; ++row) {
      if (std::fabs(a[row][col]) > std::fabs(a[pivot][col])) pivot = row;
    }
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    if (std::fabs(a[col][col]) < 1e-300) continue;
    for (std::size_t row = col + 1; row < n; ++row) {
      const double f = a[row][col] / a[col][col];
      for (std::size_t k = col; k < n; ++k) a[row][k] -= f * a[col][k];
      b[row] -= f * b[col];
    }
  }
  std::vector<double> x(n, 0.0);
  for (std::size_t i = n; i-- > 0;) {
    if (std::fabs(a[i][i]) < 1e-300) continue;
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[i][k] * x[k];
    x[i] = s / a[i][i];
  }
  return x;
}

// Jacobian by forward differences, stepping inward at an upper bound.
std::vector<std::vector<double>> jacobian(const RobustFitProblem& p, const std::vector<double>& u,
                                          const std::vector<double>& r0) {
  std::vector<std::vector<double>> j(r0.size(), std::vector<double>(u.size(), 0.0));
  for (std::size_t k = 0; k < u.size(); ++k) {
    std::vector<double> v = u;
    const double h = v[k] + kDifferenceStep <= p.upper[k] ? kDifferenceStep : -kDifferenceStep;
    v[k] += h;
    const std::vector<double> r = p.residuals(v);
    for (std::size_t i = 0; i < r0.size(); ++i) j[i][k] = (r[i] - r0[i]) / h;
  }
  return j;
}

// The damped, reweighted normal equations (J'WJ + lambda diag) d = -J'W r, solved for the
// parameters free to move: one at a bound whose step points out of the box stays there (an
// active set), and the others are solved again without it; the result is kept in the box.
std::vector<double> lm_step(const RobustFitProblem& p, const std::vector<double>& u,
                            const std::vector<std::vector<double>>& j, const std::vector<double>& r,
                            double lambda) {
  const std::size_t n = u.size();
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0.0));
  std::vector<double> g(n, 0.0);
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double w = robust_weight(r[i] / p.loss_scale, p.loss);
    for (std::size_t x = 0; x < n; ++x) {
      g[x] -= w * j[i][x] * r[i];
      for (std::size_t y = 0; y < n; ++y) a[x][y] += w * j[i][x] * j[i][y];
    }
  }
  for (std::size_t x = 0; x < n; ++x) a[x][x] += lambda * (a[x][x] + 1e-12);
  std::vector<bool> fixed(n, false);
  std::vector<double> d(n, 0.0);
  for (std::size_t round = 0; round <= n; ++round) {
    std::vector<std::size_t> free;
    for (std::size_t x = 0; x < n; ++x) {
      if (!fixed[x]) free.push_back(x);
    }
    std::vector<std::vector<double>> af(free.size(), std::vector<double>(free.size()));
    std::vector<double> gf(free.size());
    for (std::size_t x = 0; x < free.size(); ++x) {
      gf[x] = g[free[x]];
      for (std::size_t y = 0; y < free.size(); ++y) af[x][y] = a[free[x]][free[y]];
    }
    const std::vector<double> df = solve(af, gf);
    std::fill(d.begin(), d.end(), 0.0);
    bool changed = false;
    for (std::size_t x = 0; x < free.size(); ++x) {
      const std::size_t k = free[x];
      d[k] = df[x];
      const bool out = (u[k] <= p.lower[k] && d[k] < 0) || (u[k] >= p.upper[k] && d[k] > 0);
      if (out) {
        fixed[k] = true;
        changed = true;
      }
    }
    if (!changed) break;
  }
  std::vector<double> next(n);
  for (std::size_t x = 0; x < n; ++x) {
    next[x] = fixed[x] ? u[x] : std::clamp(u[x] + d[x], p.lower[x], p.upper[x]);
  }
  return next;
}

// Compass search from the LM result (Kolda, Lewis, Torczon 2003): the step-time model has kinks
// (a collective hidden under compute until it is not) where Gauss-Newton steps stall; trying
// +-h along each parameter, halving h when none helps, finishes the descent there.
RobustFitResult pattern_search(const RobustFitProblem& p, RobustFitResult best) {
  constexpr double kFirstStep = 0.02;
  constexpr double kLastStep = 1e-5;
  for (double h = kFirstStep; h >= kLastStep;) {
    bool improved = false;
    for (std::size_t k = 0; k < best.parameters.size(); ++k) {
      for (const double sign : {1.0, -1.0}) {
        std::vector<double> next = best.parameters;
        next[k] = std::clamp(next[k] + sign * h, p.lower[k], p.upper[k]);
        if (next[k] == best.parameters[k]) continue;
        const std::vector<double> r = p.residuals(next);
        const double loss = robust_loss(r, p.loss_scale, p.loss);
        if (loss < best.loss) {
          best.parameters = next;
          best.residuals = r;
          best.loss = loss;
          improved = true;
          break;
        }
      }
    }
    if (!improved) h /= 2;
  }
  return best;
}

// PRESS: the leave-one-out residuals of the linearised fit at its solution (see the header).
double leave_one_out_loss(const RobustFitProblem& p, const RobustFitResult& fit) {
  const auto j = jacobian(p, fit.parameters, fit.residuals);
  std::vector<std::size_t> free;
  for (std::size_t k = 0; k < fit.parameters.size(); ++k) {
    if (fit.parameters[k] > p.lower[k] && fit.parameters[k] < p.upper[k]) free.push_back(k);
  }
  const std::size_t n = free.size();
  std::vector<double> w(fit.residuals.size());
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = robust_weight(fit.residuals[i] / p.loss_scale, p.loss);
    for (std::size_t x = 0; x < n; ++x) {
      for (std::size_t y = 0; y < n; ++y) a[x][y] += w[i] * j[i][free[x]] * j[i][free[y]];
    }
  }
  // Below this 1 - h_ii a single run decides a parameter: its held-out residual is unbounded.
  constexpr double kMinOneMinusLeverage = 1e-3;
  std::vector<double> held_out;
  for (std::size_t i = 0; i < w.size(); ++i) {
    std::vector<double> row(n);
    for (std::size_t x = 0; x < n; ++x) row[x] = j[i][free[x]];
    const std::vector<double> z = n > 0 ? solve(a, row) : std::vector<double>{};
    double h = 0;
    for (std::size_t x = 0; x < n; ++x) h += row[x] * z[x];
    h *= w[i];
    held_out.push_back(fit.residuals[i] / std::max(1.0 - h, kMinOneMinusLeverage));
  }
  return robust_loss(held_out, p.loss_scale, p.loss);
}

}  // namespace

double robust_loss(const std::vector<double>& residuals, double scale, RobustLoss kind) {
  double loss = 0;
  for (const double r : residuals) {
    const double z2 = (r / scale) * (r / scale);
    loss += kind == RobustLoss::SoftL1 ? 2 * scale * scale * (std::sqrt(1.0 + z2) - 1.0)
                                       : scale * scale * std::log1p(z2);
  }
  return loss;
}

RobustFitResult robust_fit(const RobustFitProblem& p) {
  PARPLAN_CHECK(p.start.size() == p.lower.size() && p.start.size() == p.upper.size(),
                "robust_fit: parameter, lower and upper bound counts differ");
  RobustFitResult best;
  best.parameters = p.start;
  for (std::size_t k = 0; k < p.start.size(); ++k) {
    best.parameters[k] = std::clamp(p.start[k], p.lower[k], p.upper[k]);
  }
  best.residuals = p.residuals(best.parameters);
  best.loss = robust_loss(best.residuals, p.loss_scale, p.loss);
  best.leave_one_out_loss = best.loss;
  if (p.start.empty()) return best;
  double lambda = 1e-3;
  for (int it = 0; it < p.max_iterations; ++it) {
    best.iterations = it + 1;
    const auto j = jacobian(p, best.parameters, best.residuals);
    bool improved = false;
    bool converged = false;
    // Raise the damping until a step lowers the loss (at most a few tries per iteration).
    for (int tries = 0; tries < 8 && !improved; ++tries) {
      const std::vector<double> next = lm_step(p, best.parameters, j, best.residuals, lambda);
      const std::vector<double> r = p.residuals(next);
      const double loss = robust_loss(r, p.loss_scale, p.loss);
      if (loss < best.loss) {
        const double gain = best.loss - loss;
        best.parameters = next;
        best.residuals = r;
        best.loss = loss;
        lambda = std::max(lambda / 3.0, 1e-9);
        improved = true;
        converged = gain <= 1e-12 * std::max(loss, 1e-12);
      } else {
        lambda *= 4.0;
      }
    }
    if (!improved || converged) break;
  }
  if (!p.polish) return best;
  best = pattern_search(p, best);
  best.leave_one_out_loss = leave_one_out_loss(p, best);
  return best;
}

}  // namespace parplan::cost
