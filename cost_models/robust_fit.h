// Bounded robust least squares for a handful of parameters: minimises
//   sum_i rho(r_i(u)),  soft-L1: rho(r) = 2 c^2 (sqrt(1 + (r/c)^2) - 1)  (Triggs et al. 2000;
//                                scipy.optimize.least_squares loss="soft_l1" with f_scale c)
//                       Cauchy:  rho(r) = c^2 ln(1 + (r/c)^2)            (loss="cauchy")
// over a box of bounds, by Levenberg-Marquardt steps on the iteratively reweighted problem
// (weights rho'(r)/r: 1 / sqrt(1 + (r/c)^2), or 1 / (1 + (r/c)^2) for Cauchy, whose influence
// falls for residuals beyond c) with forward-difference Jacobians, each step
// projected onto the box. Deterministic: a fixed start, fixed differences, no randomness.
// The calibration fit (calibration_fit.h) uses it on log step-time ratios.
// Tested in tests/cost_models/calibration_fit_test.cpp.
#pragma once

#include <functional>
#include <vector>

namespace parplan::cost {

enum class RobustLoss { SoftL1, Cauchy };

struct RobustFitProblem {
  // Residuals at the parameters; every call returns the same number of them.
  std::function<std::vector<double>(const std::vector<double>&)> residuals;
  std::vector<double> start;
  std::vector<double> lower;
  std::vector<double> upper;
  // c: residuals much larger than this count linearly (soft-L1) or less and less (Cauchy).
  double loss_scale = 0.05;
  // Cauchy is not convex: start it near a solution (a soft-L1 fit).
  RobustLoss loss = RobustLoss::SoftL1;
  int max_iterations = 40;
  // false: Levenberg-Marquardt steps only, no compass search and no PRESS (a start for a
  // second fit, which polishes its own solution).
  bool polish = true;
};

struct RobustFitResult {
  std::vector<double> parameters;
  std::vector<double> residuals;
  double loss = 0;
  int iterations = 0;
  // The loss of the leave-one-out residuals r_i / (1 - h_ii) of the linearised, reweighted
  // fit (the PRESS statistic, Allen 1974; H = J (J'WJ)^-1 J'W over the parameters not held
  // at a bound): what the fit would miss on a run it had not seen, without refitting.
  double leave_one_out_loss = 0;
};

double robust_loss(const std::vector<double>& residuals, double scale, RobustLoss kind);

RobustFitResult robust_fit(const RobustFitProblem& problem);

}  // namespace parplan::cost
