// The stopping rule of every measurement (as NVIDIA/nvbench's stdrel_criterion: relative noise
// below max-noise after min-time, with a timeout that warns instead of pretending): untimed warm-up
// runs, then samples until a criterion is satisfied (relative noise below a threshold after a
// minimum count and time) or a time budget ends; every sample is kept and the result reports
// median, noise and count, and whether the criterion was met or the budget ran out first (the
// caller warns). Decisions depend only on the sample values handed in, never on a local clock, so
// ranks that agree on the values (max over ranks) take the same decisions and stay in lockstep.
// Tested in tests/profiler/stopping_rule_test.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "profiler/sample_stats.h"

namespace parplan::profiler {

// One sample as all ranks agree on it.
struct Sample {
  double seconds = 0;  // time of one repetition: the value whose median is reported
  double total_s = 0;  // time the whole sample took; counts against the budget
  // A rank lost its processor during the sample (another process ran): the sample counts
  // against the budget but is set aside, unless nothing else is left (cpu_timing.h).
  bool disturbed = false;
};

struct StoppingOptions {
  int warmup_runs = 1;      // untimed runs before the first sample
  int min_samples = 5;      // the criterion is not consulted before this many samples
  int max_samples = 1000;   // hard cap, counts as running out of budget
  double max_noise = 0.01;  // relative noise that ends sampling (nvbench max-noise 0.5 %)
  double min_time_s = 0.0;  // sampling time before the noise may end it (nvbench min-time)
  double budget_s = 1.0;    // sampling time after which it ends anyway (nvbench timeout)
  NoiseEstimator estimator = NoiseEstimator::MadOverMedian;
};

// Decides from the samples so far whether the estimate is good enough.
class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  virtual void reset() = 0;
  virtual void add(double seconds) = 0;
  virtual bool is_satisfied() const = 0;
  virtual double noise() const = 0;  // current relative noise estimate
  virtual std::string describe() const = 0;
};

// Satisfied once at least `min_samples` samples have relative noise <= max_noise.
class RelativeNoiseCriterion final : public StoppingCriterion {
 public:
  RelativeNoiseCriterion(double max_noise, int min_samples, NoiseEstimator estimator);
  void reset() override { samples_.clear(); }
  void add(double seconds) override { samples_.push_back(seconds); }
  bool is_satisfied() const override;
  double noise() const override;
  std::string describe() const override;

 private:
  double max_noise_;
  int min_samples_;
  NoiseEstimator estimator_;
  std::vector<double> samples_;
};

// Satisfied after a fixed number of samples (deterministic runs, tests).
class SampleCountCriterion final : public StoppingCriterion {
 public:
  SampleCountCriterion(int count, NoiseEstimator estimator)
      : count_(count), estimator_(estimator) {}
  void reset() override { samples_.clear(); }
  void add(double seconds) override { samples_.push_back(seconds); }
  bool is_satisfied() const override { return static_cast<int>(samples_.size()) >= count_; }
  double noise() const override { return relative_noise(samples_, estimator_); }
  std::string describe() const override;

 private:
  int count_;
  NoiseEstimator estimator_;
  std::vector<double> samples_;
};

std::unique_ptr<StoppingCriterion> make_noise_criterion(const StoppingOptions& options);

struct Measurement {
  std::vector<double> samples_s;  // every sample, in order
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  double noise = 0;   // relative, by the options' estimator
  int64_t count = 0;  // samples taken
  int64_t warmup_runs = 0;
  double sampling_s = 0;   // sum of the samples' total_s
  bool converged = false;  // false: the budget (or max_samples) ended sampling first
  int64_t disturbed = 0;   // samples set aside because a rank was descheduled
  std::vector<double> disturbed_s;
  bool disturbed_only = false;  // under two undisturbed samples: the summary uses all
  std::string criterion;        // the criterion, for reports
};

// The sampling of one measurement as a state machine: add() samples until finished().
class SampleLoop {
 public:
  SampleLoop(std::unique_ptr<StoppingCriterion> criterion, const StoppingOptions& options);
  // Adds a sample; true once the measurement is finished (criterion met or budget spent).
  bool add(const Sample& sample);
  bool finished() const { return finished_; }
  Measurement result() const;  // summary of the samples so far

 private:
  std::unique_ptr<StoppingCriterion> criterion_;
  StoppingOptions options_;
  Measurement m_;
  bool finished_ = false;
};

// Runs `warmup` options.warmup_runs times, then `take_sample` until the criterion is
// satisfied (and min_time_s has passed) or the budget / max_samples ends it.
Measurement run_samples(const std::function<void()>& warmup,
                        const std::function<Sample()>& take_sample,
                        std::unique_ptr<StoppingCriterion> criterion,
                        const StoppingOptions& options);

// One measurement for run_interleaved: `prepare` runs once before any sample (calibration
// and warm-up), `take` takes one sample.
struct Probe {
  std::function<void()> prepare;
  std::function<Sample()> take;
};

// Samples several measurements in rounds: every round takes one sample of each measurement
// still running (each with its own noise criterion and budget), so that changes of the
// machine's background load spread over all of them as noise instead of biasing a block of
// consecutive measurements (which would bias a fit across them).
std::vector<Measurement> run_interleaved(const std::vector<Probe>& probes,
                                         const StoppingOptions& options);

// "median 1.23 ms, noise 0.8 % (12 samples)" plus ", budget ended first" when not converged.
std::string describe(const Measurement& measurement);

}  // namespace parplan::profiler
