#include "cost_models/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/check.h"
#include "core/units.h"
#include "cost_models/framework_traits.h"
#include "cost_models/robust_fit.h"
#include "cost_models/step_model.h"

namespace parplan::cost {

namespace {

using Factors = std::vector<CalibrationFactor>;

// Three significant digits, for the reasons in the report.
std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

using Samples = std::vector<CalibrationSample>;

// The corrected Akaike information criterion of a fit of k factors to n runs with robust loss
// `loss` (the robust losses are sum r^2 for small r): n ln(loss/n) + 2k + 2k(k+1)/(n-k-1)
// (Hurvich and Tsai 1989). A factor is kept only when it lowers it: the loss must fall by more
// than an extra parameter explains by chance (about 18% for the first factor of 12 runs, 49% of
// 5).
double aicc(double loss, std::size_t n, std::size_t k) {
  const double runs = static_cast<double>(n);
  const double factors = static_cast<double>(k);
  const double small_sample = runs - factors - 1 > 0
                                  ? 2 * factors * (factors + 1) / (runs - factors - 1)
                                  : std::numeric_limits<double>::infinity();
  return runs * std::log(std::max(loss, 1e-300) / runs) + 2 * factors + small_sample;
}

// The measured time an additive overhead is added to once: the step, or one micro-batch of it.
double per_unit_time_s(CalibrationFactor f, const CalibrationSample& s) {
  if (f != CalibrationFactor::MicroBatchOverhead) return s.measured_step_time_s;
  const int64_t micro_batches = s.job.plan.num_micro_batches(s.job.training.global_batch_size);
  return s.measured_step_time_s / static_cast<double>(std::max<int64_t>(1, micro_batches));
}

// Physical bounds of each factor: a sustained throughput between half and 1.5x the presets'
// (clocks, kernels and software differ, but not by more); a bus bandwidth between a quarter
// (a slower or shared fabric) and twice (a better-tuned one) the preset's; a MoE expert block
// between a quarter and twice the model's throughput (its kernels are small, memory- and
// communication-bound and synchronise the host on the token counts, so the software stack
// moves it as a fabric moves a collective: Megatron-Bridge 25.11's all-to-all recipes for
// Qwen3-30B-A3B ran 2.4-2.8x slower than predicted on H100 and B200, its HybridEP recipe on
// GB200 within 12%, tests/data/benchmark_tables/mbridge_2511.json); a fixed overhead
// of at most half the shortest measured step, and a per-micro-batch overhead of at most half
// the shortest measured time per micro-batch (step / micro-batches); a memory overhead that
// removes at most the framework's workspace allowance and adds at most a quarter of the GPU's
// memory.
FactorBounds factor_bounds(CalibrationFactor f, const Samples& samples) {
  switch (f) {
    case CalibrationFactor::Compute:
      return {0.5, 1.5};
    case CalibrationFactor::IntraNode:
    case CalibrationFactor::InterNode:
    case CalibrationFactor::MoeThroughput:
      return {0.25, 2.0};
    case CalibrationFactor::StepOverhead:
    case CalibrationFactor::MicroBatchOverhead: {
      double shortest = per_unit_time_s(f, samples.front());
      for (const auto& s : samples) shortest = std::min(shortest, per_unit_time_s(f, s));
      return {0.0, 0.5 * shortest};
    }
    case CalibrationFactor::Memory:
      break;
  }
  double workspace = 1e9;
  double memory = 1e9;
  for (const auto& s : samples) {
    const FrameworkTraits t = framework_traits(s.job.framework, s.job.training, s.job.plan);
    workspace = std::min(workspace, t.workspace_gib);
    memory = std::min(memory, s.job.cluster.node.gpu.memory_gib);
  }
  return {-workspace, 0.25 * memory};
}

// Seconds one unit of an overhead's parameter stands for: the median measured step (the step
// overhead) or time per micro-batch (the micro-batch overhead), so that every parameter of the
// fit is of order one; 1 for the fractions, whose parameter is a log.
double overhead_scale_s(CalibrationFactor f, const Samples& samples) {
  if (!is_additive(f)) return 1.0;
  std::vector<double> t;
  for (const auto& s : samples) t.push_back(per_unit_time_s(f, s));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Parameter u of the fit <-> factor value: log of a fraction, overhead in overhead_scale_s.
double to_value(CalibrationFactor f, double u, double scale) {
  return is_additive(f) ? u * scale : std::exp(u);
}
double to_parameter(CalibrationFactor f, double value, double scale) {
  return is_additive(f) ? value / scale : std::log(value);
}

// Each factor's overhead_scale_s over the runs, in the order of `factors`.
std::vector<double> overhead_scales_s(const Factors& factors, const Samples& samples) {
  std::vector<double> scales;
  for (const CalibrationFactor f : factors) scales.push_back(overhead_scale_s(f, samples));
  return scales;
}

Calibration with_values(Calibration base, const Factors& factors, const std::vector<double>& u,
                        const std::vector<double>& scales) {
  for (std::size_t k = 0; k < factors.size(); ++k) {
    factor_value(base, factors[k]) = to_value(factors[k], u[k], scales[k]);
  }
  return base;
}

std::vector<double> log_time_residuals(const Samples& samples, const Calibration& c) {
  std::vector<double> r;
  for (const auto& s : samples) {
    r.push_back(std::log(predict_calibrated(s, c).step_time_s / s.measured_step_time_s));
  }
  return r;
}

// The prior on each step-time factor (calibration_fit.h): the spread of its parameter u
// (to_parameter) between one real cluster and the reference system the presets describe.
// A compute throughput within about 20% (sustained clocks under power and thermal limits,
// kernel and library versions: fitted to the public groups with a loose prior (0.3), the
// compute fractions came out from 0.82, NeMo 25.02 on B200, to 1.05, LLM Foundry on A100
// 80GB, a log spread up to 0.2; docs/calibration.md); a bus bandwidth within a factor of
// about 1.6 (fabric, topology, tuning: log 1.65 = 0.5), and so the MoE expert block
// (dispatcher, fusions, host synchronisation); a per-step overhead of about a tenth of a step,
// and a per-micro-batch overhead of about a tenth of a micro-batch.
double prior_sigma(CalibrationFactor f) {
  switch (f) {
    case CalibrationFactor::Compute:
      return 0.20;
    case CalibrationFactor::IntraNode:
    case CalibrationFactor::InterNode:
    case CalibrationFactor::MoeThroughput:
      return 0.5;
    case CalibrationFactor::StepOverhead:
    case CalibrationFactor::MicroBatchOverhead:
    case CalibrationFactor::Memory:
      break;
  }
  return 0.10;
}

// The loss the step-time fits end with, and that selection compares their losses in.
constexpr RobustLoss kTimeLoss = RobustLoss::Cauchy;

// The convex soft-L1 fit, then the redescending Cauchy loss (kTimeLoss) from its solution (an
// M-estimate started from a convex one: Maronna, Martin and Yohai 2006, section 4.4).
RobustFitResult two_stage_fit(RobustFitProblem p) {
  p.loss = RobustLoss::SoftL1;
  p.polish = false;  // only a start: the Cauchy fit runs the compass search and PRESS
  const RobustFitResult convex = robust_fit(p);
  p.loss = kTimeLoss;
  p.polish = true;
  p.start = convex.parameters;
  return robust_fit(p);
}

struct SetFit {
  Calibration calibration;
  double loss = 0;
  double leave_one_out_loss = 0;  // PRESS (robust_fit.h)
};

SetFit fit_time_factors(const Samples& samples, const Factors& factors, const Calibration& base) {
  const std::vector<double> scale = overhead_scales_s(factors, samples);
  RobustFitProblem p;
  p.loss_scale = kLogLossScale;
  for (std::size_t k = 0; k < factors.size(); ++k) {
    const FactorBounds b = factor_bounds(factors[k], samples);
    p.start.push_back(to_parameter(factors[k], identity_value(factors[k]), scale[k]));
    p.lower.push_back(to_parameter(factors[k], b.min, scale[k]));
    p.upper.push_back(to_parameter(factors[k], b.max, scale[k]));
  }
  // First the plain fit; its residual spread is the noise a run carries as evidence.
  p.residuals = [&](const std::vector<double>& u) {
    return log_time_residuals(samples, with_values(base, factors, u, scale));
  };
  const RobustFitResult plain = two_stage_fit(p);
  double sum_squares = 0;
  for (double v : plain.residuals) sum_squares += v * v;
  const double dof = std::max(1.0, static_cast<double>(samples.size() - factors.size()));
  const double run_log_error = std::sqrt(sum_squares / dof);
  if (run_log_error <= 0) {
    return {with_values(base, factors, plain.parameters, scale), plain.loss,
            plain.leave_one_out_loss};
  }
  // Then the fit with the prior: each factor adds u / sigma_prior * run_log_error.
  p.start = plain.parameters;
  p.residuals = [&](const std::vector<double>& u) {
    std::vector<double> r = log_time_residuals(samples, with_values(base, factors, u, scale));
    for (std::size_t k = 0; k < factors.size(); ++k) {
      r.push_back(u[k] * run_log_error / prior_sigma(factors[k]));
    }
    return r;
  };
  const RobustFitResult r = two_stage_fit(p);
  return {with_values(base, factors, r.parameters, scale), r.loss, r.leave_one_out_loss};
}

// d log t_i / d u of every run at the identity (u as in to_parameter), by a difference of
// 10% of a fraction or of 10% of the median step (micro-batch) in overhead.
std::vector<double> effect_column(const Samples& samples, CalibrationFactor f,
                                  const std::vector<double>& at_identity) {
  const double scale = overhead_scale_s(f, samples);
  const double du = is_additive(f) ? 0.1 : std::log(0.9);
  Calibration c;
  factor_value(c, f) = to_value(f, du, scale);
  std::vector<double> column = log_time_residuals(samples, c);
  for (std::size_t i = 0; i < column.size(); ++i) column[i] = (column[i] - at_identity[i]) / du;
  return column;
}

// Uncentred R^2 of `column` on the span of `chosen` (least squares without intercept: the
// factors act on log time with no constant term of their own).
double explained_by(const std::vector<double>& column,
                    const std::vector<std::vector<double>>& chosen) {
  double total = 0;
  for (double v : column) total += v * v;
  if (chosen.empty() || total == 0) return 0.0;
  // Gram-Schmidt: remove each chosen column's direction in turn.
  std::vector<std::vector<double>> basis;
  for (const auto& c : chosen) {
    std::vector<double> q = c;
    for (const auto& b : basis) {
      double dot = 0;
      for (std::size_t i = 0; i < q.size(); ++i) dot += q[i] * b[i];
      for (std::size_t i = 0; i < q.size(); ++i) q[i] -= dot * b[i];
    }
    double norm = 0;
    for (double v : q) norm += v * v;
    if (norm <= 1e-24) continue;
    for (double& v : q) v /= std::sqrt(norm);
    basis.push_back(q);
  }
  std::vector<double> rest = column;
  for (const auto& b : basis) {
    double dot = 0;
    for (std::size_t i = 0; i < rest.size(); ++i) dot += rest[i] * b[i];
    for (std::size_t i = 0; i < rest.size(); ++i) rest[i] -= dot * b[i];
  }
  double left = 0;
  for (double v : rest) left += v * v;
  return 1.0 - left / total;
}

struct Candidate {
  CalibrationFactor factor;
  std::vector<double> column;
  double max_elasticity = 0;
};

// Every step-time factor with its effect column; the reason when the runs do not exercise it.
std::vector<Candidate> time_candidates(const Samples& samples, std::vector<FactorReport>& reports) {
  const std::vector<double> at_identity = log_time_residuals(samples, Calibration{});
  std::vector<Candidate> out;
  for (FactorReport& report : reports) {
    if (report.factor == CalibrationFactor::Memory) continue;
    Candidate c{report.factor, effect_column(samples, report.factor, at_identity), 0.0};
    for (double v : c.column) c.max_elasticity = std::max(c.max_elasticity, std::fabs(v));
    report.max_elasticity = c.max_elasticity;
    if (report.factor != CalibrationFactor::StepOverhead && c.max_elasticity < kMinElasticity) {
      report.reason = "not exercised: no run's step time depends on it (largest elasticity " +
                      format_number(c.max_elasticity) + " < " + format_number(kMinElasticity) + ")";
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

FactorReport& report_of(std::vector<FactorReport>& reports, CalibrationFactor f) {
  return reports[static_cast<std::size_t>(f)];
}

std::string identifiability_reason(double r2) {
  return "not identifiable: " + format_number(100 * r2) +
         "% of its effect over these runs is that of the factors already fitted (more than " +
         format_number(100 * kMaxExplainedByOthers) + "%)";
}

// Fits the requested factors, refusing any the runs cannot support.
Calibration fit_requested(const Samples& samples, const Factors& requested,
                          std::vector<Candidate>& candidates, std::vector<FactorReport>& reports) {
  std::vector<std::vector<double>> chosen;
  Factors factors;
  for (const CalibrationFactor f : requested) {
    if (f == CalibrationFactor::Memory) continue;
    FactorReport& report = report_of(reports, f);
    auto it = std::find_if(candidates.begin(), candidates.end(),
                           [&](const Candidate& c) { return c.factor == f; });
    if (it == candidates.end())
      throw CalibrationRefused(std::string(to_string(f)) + ": " + report.reason);
    const double r2 = explained_by(it->column, chosen);
    if (r2 > kMaxExplainedByOthers) {
      throw CalibrationRefused(std::string(to_string(f)) + ": " + identifiability_reason(r2));
    }
    chosen.push_back(it->column);
    factors.push_back(f);
    report.reason = "requested";
  }
  const std::size_t budget = samples.size() / kRunsPerFactor;
  if (factors.size() > budget) {
    throw CalibrationRefused(std::to_string(factors.size()) + " step-time factors requested from " +
                             std::to_string(samples.size()) + " runs; at most one factor per " +
                             std::to_string(kRunsPerFactor) + " runs (" + std::to_string(budget) +
                             " here)");
  }
  return fit_time_factors(samples, factors, Calibration{}).calibration;
}

// Whether forward selection considers a factor; the others are fitted only when requested.
// The per-micro-batch overhead is not: its effect grows with the number of micro-batches, and
// on the public groups it stood in for costs that grow with other keys of the same runs
// (BLOOM's early tensor-parallel-8 runs at one sequence per micro-batch: with it, its
// leave-one-out error went from 5.9% to 8.3%, its pipeline-48 run from +1.6% to +12.7%),
// while it helped where host work per micro-batch is the cause (LLM Foundry on H100: 5.5% to
// 4.2%); docs/calibration.md.
bool selected_automatically(CalibrationFactor f) {
  return f != CalibrationFactor::MicroBatchOverhead;
}

// The next factor of forward selection: among the candidates whose fit together with the
// chosen ones lowers both the AICc and the leave-one-out loss (PRESS), the one with the lowest
// PRESS; null when none does. `best_fit` receives its fit.
const Candidate* next_factor(const Samples& samples, const std::vector<Candidate>& candidates,
                             const Factors& chosen,
                             const std::vector<std::vector<double>>& chosen_columns, double loss,
                             double press, std::vector<FactorReport>& reports, SetFit& best_fit) {
  const std::size_t n = samples.size();
  const Candidate* best = nullptr;
  for (const Candidate& c : candidates) {
    if (std::find(chosen.begin(), chosen.end(), c.factor) != chosen.end()) continue;
    if (!selected_automatically(c.factor)) continue;
    const double r2 = explained_by(c.column, chosen_columns);
    if (r2 > kMaxExplainedByOthers) {
      report_of(reports, c.factor).reason = identifiability_reason(r2);
      continue;
    }
    Factors trial = chosen;
    trial.push_back(c.factor);
    const SetFit fit = fit_time_factors(samples, trial, Calibration{});
    const bool qualifies = aicc(fit.loss, n, trial.size()) < aicc(loss, n, chosen.size()) &&
                           fit.leave_one_out_loss < press;
    if (qualifies && (best == nullptr || fit.leave_one_out_loss < best_fit.leave_one_out_loss)) {
      best_fit = fit;
      best = &c;
    }
  }
  return best;
}

// Forward selection (see the header); fills each factor's report.
Calibration select_and_fit(const Samples& samples, std::vector<Candidate>& candidates,
                           std::vector<FactorReport>& reports) {
  const std::size_t budget = samples.size() / kRunsPerFactor;
  const double loss0 =
      robust_loss(log_time_residuals(samples, Calibration{}), kLogLossScale, kTimeLoss);
  for (const Candidate& c : candidates) {
    if (!selected_automatically(c.factor)) {
      report_of(reports, c.factor).reason =
          std::string("not fitted: fitted only when requested (--factors ") + to_string(c.factor) +
          ")";
    }
  }
  Calibration current;
  double loss = loss0;
  double press = loss0;
  Factors chosen;
  std::vector<std::vector<double>> chosen_columns;
  // Below this loss per run (residuals of about 1e-4, 0.01%) the runs are matched exactly:
  // nothing is left for another factor to explain.
  constexpr double kExactLossPerRun = 1e-8;
  while (chosen.size() < budget && loss > kExactLossPerRun * static_cast<double>(samples.size())) {
    SetFit best_fit{current, loss, press};
    const Candidate* best =
        next_factor(samples, candidates, chosen, chosen_columns, loss, press, reports, best_fit);
    if (best == nullptr) break;
    FactorReport& report = report_of(reports, best->factor);
    report.explained_loss_fraction = loss0 > 0 ? (loss - best_fit.loss) / loss0 : 0.0;
    report.reason = "chosen: removes " + format_number(100 * (loss - best_fit.loss) / loss) +
                    "% of the loss left, lowers the AICc and the leave-one-out loss";
    chosen.push_back(best->factor);
    chosen_columns.push_back(best->column);
    current = best_fit.calibration;
    loss = best_fit.loss;
    press = best_fit.leave_one_out_loss;
  }
  for (FactorReport& report : reports) {
    const bool taken = std::find(chosen.begin(), chosen.end(), report.factor) != chosen.end();
    if (taken || !report.reason.empty() || report.factor == CalibrationFactor::Memory) continue;
    report.reason = chosen.size() >= budget
                        ? "not fitted: the budget of one factor per " +
                              std::to_string(kRunsPerFactor) + " runs is spent"
                        : "not fitted: does not lower both the fit's corrected Akaike "
                          "information criterion (AICc) and its leave-one-out loss (PRESS)";
  }
  return current;
}

// The memory overhead: fitted to the runs with a memory reference when there are at least
// kRunsPerFactor of them and it lowers their fit's AICc.
void fit_memory(const Samples& samples, const std::vector<double>& predicted_gib, bool requested,
                Calibration& calibration, FactorReport& report) {
  std::vector<double> pred, meas;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].measured_memory_gib) continue;
    pred.push_back(predicted_gib[i]);
    meas.push_back(*samples[i].measured_memory_gib);
  }
  if (pred.size() < static_cast<std::size_t>(kRunsPerFactor)) {
    report.reason = "not fitted: " + std::to_string(pred.size()) +
                    " runs with a memory reference (needs " + std::to_string(kRunsPerFactor) + ")";
    if (requested)
      throw CalibrationRefused(std::string(to_string(report.factor)) + ": " + report.reason);
    return;
  }
  RobustFitProblem p;
  p.loss_scale = kLogLossScale;
  p.start = {0.0};
  p.lower = {report.bounds.min};
  p.upper = {report.bounds.max};
  p.residuals = [&](const std::vector<double>& u) {
    std::vector<double> r;
    for (std::size_t i = 0; i < pred.size(); ++i) {
      r.push_back(std::log(std::max(pred[i] + u[0], 1e-9) / meas[i]));
    }
    return r;
  };
  const double loss0 = robust_loss(p.residuals({0.0}), kLogLossScale, p.loss);
  const RobustFitResult r = robust_fit(p);
  if (!requested && aicc(r.loss, pred.size(), 1) >= aicc(loss0, pred.size(), 0)) {
    report.reason = "not fitted: does not lower the memory fit's AICc";
    return;
  }
  calibration.memory_overhead_gib = r.parameters[0];
  report.explained_loss_fraction = loss0 > 0 ? (loss0 - r.loss) / loss0 : 0.0;
  report.reason = requested
                      ? "requested"
                      : "chosen: removes " + format_number(100 * report.explained_loss_fraction) +
                            "% of the memory loss";
}

void check_samples(const Samples& samples) {
  if (samples.size() < static_cast<std::size_t>(kRunsPerFactor)) {
    throw CalibrationRefused(std::to_string(samples.size()) + " runs: calibration needs at least " +
                             std::to_string(kRunsPerFactor) + " (one factor per " +
                             std::to_string(kRunsPerFactor) + " runs)");
  }
  for (const auto& s : samples) {
    PARPLAN_CHECK(s.job.cluster.node.name == samples.front().job.cluster.node.name, "run ", s.id,
                  ": node ", s.job.cluster.node.name, " differs from run ", samples.front().id,
                  "'s ", samples.front().job.cluster.node.name,
                  "; a calibration holds for one node type");
    PARPLAN_CHECK(s.measured_step_time_s > 0, "run ", s.id, ": measured step time ",
                  s.measured_step_time_s, " is not positive");
  }
}

}  // namespace

CalibratedPrediction predict_calibrated(const CalibrationSample& sample,
                                        const Calibration& calibration) {
  const StepEstimate e = estimate_step(calibrated_job(sample.job, calibration));
  return {e.step_time_s, e.memory.peak_bytes / kGiB};
}

CalibrationFit fit_calibration(const Samples& samples, const CalibrationFitOptions& options) {
  check_samples(samples);
  CalibrationFit out;
  for (const CalibrationFactor f : all_calibration_factors()) {
    FactorReport report;
    report.factor = f;
    report.bounds = factor_bounds(f, samples);
    out.factors.push_back(report);
  }
  std::vector<Candidate> candidates = time_candidates(samples, out.factors);
  out.calibration = options.requested.empty()
                        ? select_and_fit(samples, candidates, out.factors)
                        : fit_requested(samples, options.requested, candidates, out.factors);
  std::vector<double> memory_gib;
  for (const auto& s : samples)
    memory_gib.push_back(predict_calibrated(s, Calibration{}).memory_gib);
  const bool memory_requested = std::find(options.requested.begin(), options.requested.end(),
                                          CalibrationFactor::Memory) != options.requested.end();
  if (options.requested.empty() || memory_requested) {
    fit_memory(samples, memory_gib, memory_requested, out.calibration,
               report_of(out.factors, CalibrationFactor::Memory));
  }
  for (FactorReport& r : out.factors) {
    r.value = factor_value(out.calibration, r.factor);
    r.fitted = r.value != identity_value(r.factor) || r.reason == "requested" ||
               r.reason.starts_with("chosen");
    if (r.reason.empty()) r.reason = "not requested";
  }
  for (const auto& s : samples) {
    const CalibratedPrediction before = predict_calibrated(s, Calibration{});
    const CalibratedPrediction after = predict_calibrated(s, out.calibration);
    out.errors_before.push_back(before.step_time_s / s.measured_step_time_s - 1.0);
    out.errors_after.push_back(after.step_time_s / s.measured_step_time_s - 1.0);
    std::optional<double> mb, ma;
    if (s.measured_memory_gib) {
      mb = before.memory_gib / *s.measured_memory_gib - 1.0;
      ma = after.memory_gib / *s.measured_memory_gib - 1.0;
    }
    out.memory_errors_before.push_back(mb);
    out.memory_errors_after.push_back(ma);
  }
  return out;
}

LeaveOneOut leave_one_out(const Samples& samples, const CalibrationFitOptions& options) {
  check_samples(samples);
  LeaveOneOut out;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    Samples others;
    for (std::size_t j = 0; j < samples.size(); ++j) {
      if (j != i) others.push_back(samples[j]);
    }
    Calibration c;
    try {
      c = fit_calibration(others, options).calibration;
    } catch (const CalibrationRefused&) {
      // Too few runs left for the rules: this fold stays uncalibrated.
    }
    const double t = samples[i].measured_step_time_s;
    out.uncalibrated_errors.push_back(
        predict_calibrated(samples[i], Calibration{}).step_time_s / t - 1.0);
    out.calibrated_errors.push_back(predict_calibrated(samples[i], c).step_time_s / t - 1.0);
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    out.uncalibrated_mape +=
        std::fabs(out.uncalibrated_errors[i]) / static_cast<double>(samples.size());
    out.calibrated_mape +=
        std::fabs(out.calibrated_errors[i]) / static_cast<double>(samples.size());
  }
  return out;
}

}  // namespace parplan::cost
