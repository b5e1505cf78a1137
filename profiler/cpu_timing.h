// CPU timing of a function on every rank at once (measure_cpu_only in nvbench terms): each
// sample is barrier -> steady_clock -> `reps` calls -> steady_clock, and the sample all ranks
// keep is the slowest rank's (max over ranks), as in a synchronous training step. The number
// of repetitions per sample is calibrated once so that a sample lasts about target_sample_s.
// The wall time is steady_clock's; each rank's thread CPU time over the same interval only
// tells whether the rank kept its processor: when any rank ran less than kMinCpuFraction of
// the sample (another process was scheduled on its core), the sample is marked disturbed and
// set aside by the stopping rule, so a shared machine's other work does not bias medians.
// Tested in tests/profiler/cpu_backend_test.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "profiler/process_group.h"
#include "profiler/stopping_rule.h"

namespace parplan::profiler {

// A sample in which some rank ran less than this share of the wall time is disturbed.
inline constexpr double kMinCpuFraction = 0.9;

// CPU time of the calling thread, seconds (CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_seconds();

class CpuTimer {
 public:
  void start() { start_ = std::chrono::steady_clock::now(); }
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Repetitions so that reps * once_s is about target_s, in [1, max_reps].
int64_t repetitions_for(double once_s, double target_s, int64_t max_reps = 1'000'000);

// A probe for run_interleaved: prepare() calls fn once, timed, to size the samples, then
// options.warmup_runs more times; take() is one lockstep sample.
Probe cpu_probe(ProcessGroup& group, std::function<void()> fn, const StoppingOptions& options,
                double target_sample_s);

// One measurement: run_interleaved of one cpu_probe.
Measurement measure_on_ranks(ProcessGroup& group, const std::function<void()>& fn,
                             const StoppingOptions& options, double target_sample_s);

}  // namespace parplan::profiler
