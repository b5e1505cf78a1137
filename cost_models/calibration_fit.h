// Fits a Calibration (core/calibration.h) to measured runs, with the guard against
// overfitting that docs/calibration.md states:
//   - at least 3 runs; at most one step-time factor per 3 runs (floor(n/3)), and the memory
//     factor only with at least 3 memory references;
//   - a factor is a candidate only when the runs exercise it: changing it by 10% moves the
//     predicted step time of at least one run by 5% of that change (elasticity >= 0.05; the
//     step overhead always qualifies), and when it is identifiable: less than 99% of its
//     effect over the runs (its column of d log t / d factor) is explained by the factors
//     already chosen (R^2 < 0.99);
//   - forward selection: each round fits every candidate with the factors chosen so far and,
//     of those that lower both the fit's leave-one-out loss estimated by PRESS (robust_fit.h)
//     and the corrected Akaike information criterion, AICc = n ln(loss/n) + 2k +
//     2k(k+1)/(n-k-1) (Hurvich and Tsai 1989), keeps the one with the lowest PRESS; it stops
//     when none does or the budget is spent. The per-micro-batch overhead is fitted only when
//     requested (calibration_fit.cpp: selected_automatically).
// The fit is robust least squares (robust_fit.h) on log(predicted / measured) step time: the
// soft-L1 fit (scale 0.05), then the Cauchy loss (scale 0.05) from its solution, so that a run the
// model misses for reasons of its own (GPT-OSS-120B, 20-40% too fast on every GPU) moves the
// cluster's factors little, with a prior on each factor centred on the reference system (a maximum
// a posteriori fit; Gaussian near the reference, heavy-tailed beyond the loss scale, as its
// pseudo-residuals go through the same robust loss): each fitted factor adds the pseudo-residual u
// / sigma_prior * s, with u the factor's log (or its overhead in median steps or median times per
// micro-batch), sigma_prior the spread of that factor between real clusters (calibration_fit.cpp:
// prior_sigma) and s the residual spread of the plain fit, sqrt(sum r^2 / (n - k)): the noise each
// run carries as evidence (empirical Bayes). Runs that a factor explains exactly (s = 0) recover it
// exactly; a few runs, or runs that disagree, move it less (on the public groups no group's
// held-out error gets worse by more than 0.6 points, docs/calibration.md). Memory is fitted with
// the soft-L1 loss on log peak memory. Leave-one-out repeats the whole procedure (selection
// included) without each run in turn and predicts it.
// Tested in tests/cost_models/calibration_fit_test.cpp.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/calibration.h"
#include "core/job.h"

namespace parplan::cost {

// The runs cannot support the fit asked for (too few runs, a requested factor that is not
// exercised or not identifiable): `parplan calibrate` exits with code 2 and this message.
class CalibrationRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kRunsPerFactor = 3;
inline constexpr double kMinElasticity = 0.05;
inline constexpr double kMaxExplainedByOthers = 0.99;  // R^2
inline constexpr double kLogLossScale = 0.05;

struct CalibrationSample {
  std::string id;
  Job job;  // uncalibrated
  double measured_step_time_s = 0;
  std::optional<double> measured_memory_gib;
};

struct FactorBounds {
  double min = 0;
  double max = 0;
};

struct FactorReport {
  CalibrationFactor factor = CalibrationFactor::Compute;
  FactorBounds bounds;
  double max_elasticity = 0;  // over the runs, at the identity
  bool fitted = false;
  double value = 0;
  double explained_loss_fraction = 0;  // of the uncalibrated loss, when it was added
  std::string reason;                  // why it was or was not fitted
};

struct CalibrationFitOptions {
  // Factors to fit; empty: choose by the rules above. A requested factor the runs do not
  // exercise or cannot identify refuses the fit.
  std::vector<CalibrationFactor> requested;
};

struct CalibrationFit {
  Calibration calibration;
  std::vector<FactorReport> factors;  // every factor, in all_calibration_factors() order
  std::vector<double> errors_before;  // predicted / measured - 1, per run
  std::vector<double> errors_after;
  std::vector<std::optional<double>> memory_errors_before;
  std::vector<std::optional<double>> memory_errors_after;
};

struct LeaveOneOut {
  std::vector<double> uncalibrated_errors;  // per held-out run
  std::vector<double> calibrated_errors;
  double uncalibrated_mape = 0;
  double calibrated_mape = 0;
};

// Throws CalibrationRefused for fewer than 3 runs or a requested factor the runs cannot
// support; parplan::Error when the runs are on different node types or a run cannot be
// predicted (naming the run).
CalibrationFit fit_calibration(const std::vector<CalibrationSample>& samples,
                               const CalibrationFitOptions& options = {});

// Leave-one-out over the runs (needs at least 4: each fit keeps 3). Folds that the rules
// refuse keep the uncalibrated prediction.
LeaveOneOut leave_one_out(const std::vector<CalibrationSample>& samples,
                          const CalibrationFitOptions& options = {});

// Predicted step time and peak memory (GiB) of a sample's job under a calibration.
struct CalibratedPrediction {
  double step_time_s = 0;
  double memory_gib = 0;
};
CalibratedPrediction predict_calibrated(const CalibrationSample& sample,
                                        const Calibration& calibration);

}  // namespace parplan::cost
