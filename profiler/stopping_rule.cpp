#include "profiler/stopping_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/check.h"
#include "core/units.h"

namespace parplan::profiler {

namespace {
std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %%", fraction * 100.0);
  return text;
}

std::string seconds_text(double s) {
  char text[32];
  if (s < kMs) {
    std::snprintf(text, sizeof text, "%.2f us", s * kUsPerS);
  } else if (s < 1.0) {
    std::snprintf(text, sizeof text, "%.3f ms", s * kMsPerS);
  } else {
    std::snprintf(text, sizeof text, "%.3f s", s);
  }
  return text;
}
}  // namespace

RelativeNoiseCriterion::RelativeNoiseCriterion(double max_noise, int min_samples,
                                               NoiseEstimator estimator)
    : max_noise_(max_noise), min_samples_(std::max(min_samples, 2)), estimator_(estimator) {
  PARPLAN_CHECK(max_noise > 0, "the relative noise threshold must be positive, got ", max_noise);
}

bool RelativeNoiseCriterion::is_satisfied() const {
  return static_cast<int>(samples_.size()) >= min_samples_ && noise() <= max_noise_;
}

double RelativeNoiseCriterion::noise() const { return relative_noise(samples_, estimator_); }

std::string RelativeNoiseCriterion::describe() const {
  return std::string(to_string(estimator_)) + " <= " + percent(max_noise_) + " after " +
         std::to_string(min_samples_) + " samples";
}

std::string SampleCountCriterion::describe() const { return std::to_string(count_) + " samples"; }

std::unique_ptr<StoppingCriterion> make_noise_criterion(const StoppingOptions& options) {
  return std::make_unique<RelativeNoiseCriterion>(options.max_noise, options.min_samples,
                                                  options.estimator);
}

SampleLoop::SampleLoop(std::unique_ptr<StoppingCriterion> criterion, const StoppingOptions& options)
    : criterion_(std::move(criterion)), options_(options) {
  PARPLAN_CHECK(options.max_samples >= 1, "max_samples must be at least 1");
  PARPLAN_ASSERT(criterion_ != nullptr);
  m_.criterion = criterion_->describe();
  m_.warmup_runs = options.warmup_runs;
  criterion_->reset();
}

bool SampleLoop::add(const Sample& sample) {
  if (finished_) return true;
  m_.sampling_s += sample.total_s;
  if (sample.disturbed) {
    m_.disturbed_s.push_back(sample.seconds);
  } else {
    m_.samples_s.push_back(sample.seconds);
    criterion_->add(sample.seconds);
  }
  const int count = static_cast<int>(m_.samples_s.size());
  const int all = count + static_cast<int>(m_.disturbed_s.size());
  if (!sample.disturbed && count >= options_.min_samples && m_.sampling_s >= options_.min_time_s &&
      criterion_->is_satisfied()) {
    m_.converged = true;
    finished_ = true;
  }
  // Two samples at least, so that a noise estimate exists even for a slow kernel.
  const bool out_of_budget = m_.sampling_s >= options_.budget_s && all >= 2;
  if (out_of_budget || all >= options_.max_samples) finished_ = true;
  return finished_;
}

Measurement SampleLoop::result() const {
  Measurement m = m_;
  m.disturbed = static_cast<int64_t>(m.disturbed_s.size());
  if (m.samples_s.size() < 2) {
    // Too few undisturbed samples to summarise: the disturbed ones are all there is.
    m.disturbed_only = !m.disturbed_s.empty();
    m.samples_s.insert(m.samples_s.end(), m.disturbed_s.begin(), m.disturbed_s.end());
    m.converged = false;
  }
  m.count = static_cast<int64_t>(m.samples_s.size());
  if (m.samples_s.empty()) return m;
  m.median_s = median(m.samples_s);
  m.min_s = *std::min_element(m.samples_s.begin(), m.samples_s.end());
  m.max_s = *std::max_element(m.samples_s.begin(), m.samples_s.end());
  m.noise = relative_noise(m.samples_s, options_.estimator);
  if (!std::isfinite(m.noise)) m.noise = 0.0;  // one sample: no estimate, reported as 0
  return m;
}

Measurement run_samples(const std::function<void()>& warmup,
                        const std::function<Sample()>& take_sample,
                        std::unique_ptr<StoppingCriterion> criterion,
                        const StoppingOptions& options) {
  SampleLoop loop(std::move(criterion), options);
  for (int i = 0; i < options.warmup_runs; ++i) warmup();
  while (!loop.add(take_sample())) {
  }
  return loop.result();
}

std::vector<Measurement> run_interleaved(const std::vector<Probe>& probes,
                                         const StoppingOptions& options) {
  std::vector<SampleLoop> loops;
  loops.reserve(probes.size());
  for (const auto& probe : probes) {
    probe.prepare();
    loops.emplace_back(make_noise_criterion(options), options);
  }
  bool running = !probes.empty();
  while (running) {
    running = false;
    for (std::size_t i = 0; i < probes.size(); ++i) {
      if (loops[i].finished()) continue;
      running = !loops[i].add(probes[i].take()) || running;
    }
  }
  std::vector<Measurement> out;
  out.reserve(loops.size());
  for (const auto& loop : loops) out.push_back(loop.result());
  return out;
}

std::string describe(const Measurement& m) {
  std::string text = "median " + seconds_text(m.median_s) + ", noise " + percent(m.noise) + " (" +
                     std::to_string(m.count) + " samples)";
  if (m.disturbed > 0) text += ", " + std::to_string(m.disturbed) + " disturbed set aside";
  if (!m.converged) text += ", budget ended first";
  return text;
}

}  // namespace parplan::profiler
