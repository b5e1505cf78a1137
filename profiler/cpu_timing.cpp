#include "profiler/cpu_timing.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace parplan::profiler {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int64_t repetitions_for(double once_s, double target_s, int64_t max_reps) {
  if (!(once_s > 0)) return max_reps;
  // The small allowance keeps 1e-3 / 1e-6 = 1000.0000000000001 at 1000.
  const double reps = std::ceil(target_s / once_s * (1 - 1e-12));
  return std::clamp<int64_t>(static_cast<int64_t>(std::min(reps, 1e18)), 1, max_reps);
}

Probe cpu_probe(ProcessGroup& group, std::function<void()> fn, const StoppingOptions& options,
                double target_sample_s) {
  auto reps = std::make_shared<int64_t>(1);
  auto shared_fn = std::make_shared<std::function<void()>>(std::move(fn));
  Probe probe;
  probe.prepare = [&group, reps, shared_fn, options, target_sample_s] {
    // Calibration: the first call (which also warms caches and pages) sizes the samples.
    group.barrier();
    CpuTimer timer;
    timer.start();
    (*shared_fn)();
    const double once_s = group.max_over_ranks(timer.elapsed_s());
    *reps = repetitions_for(once_s, target_sample_s);
    for (int i = 0; i < options.warmup_runs; ++i) (*shared_fn)();
  };
  probe.take = [&group, reps, shared_fn] {
    group.barrier();
    CpuTimer timer;
    const double cpu_start = thread_cpu_seconds();
    timer.start();
    for (int64_t i = 0; i < *reps; ++i) (*shared_fn)();
    const double wall = timer.elapsed_s();
    const double cpu_fraction = wall > 0 ? (thread_cpu_seconds() - cpu_start) / wall : 1.0;
    const double total = group.max_over_ranks(wall);
    const double least_fraction = -group.max_over_ranks(-cpu_fraction);
    return Sample{total / static_cast<double>(*reps), total, least_fraction < kMinCpuFraction};
  };
  return probe;
}

Measurement measure_on_ranks(ProcessGroup& group, const std::function<void()>& fn,
                             const StoppingOptions& options, double target_sample_s) {
  return run_interleaved({cpu_probe(group, fn, options, target_sample_s)}, options).front();
}

}  // namespace parplan::profiler
