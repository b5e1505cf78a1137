#include "profiler/profile_options.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "profiler/backend.h"

namespace parplan::profiler {

ProfileOptions default_profile_options(bool quick) {
  ProfileOptions options;
  options.quick = quick;
  options.stopping.warmup_runs = 1;
  options.stopping.min_samples = 5;
  options.stopping.max_samples = quick ? 200 : 1000;
  options.stopping.max_noise = quick ? 0.03 : 0.01;
  options.stopping.min_time_s = quick ? 0.0 : 0.05;
  options.stopping.budget_s = quick ? 0.25 : 2.0;
  options.stopping.estimator = NoiseEstimator::MadOverMedian;
  options.target_sample_s = quick ? 0.002 : 0.005;
  return options;
}

std::vector<double> doubling_sizes(double min_bytes, double max_bytes) {
  std::vector<double> sizes;
  for (double s = min_bytes; s <= max_bytes * (1 + 1e-12); s *= 2) sizes.push_back(s);
  return sizes;
}

std::vector<double> collective_sizes(const ProfileOptions& options, int ranks_on_host,
                                     double free_bytes, double buffers_per_rank,
                                     std::vector<std::string>& warnings) {
  if (!options.collective_sizes.empty()) return options.collective_sizes;
  double max_bytes = options.max_collective_bytes > 0 ? options.max_collective_bytes
                     : options.quick                  ? 64.0 * kMiB
                                                      : 1.0 * kGiB;
  if (free_bytes > 0) {
    const double fit = free_bytes / 4.0 / buffers_per_rank / std::max(1, ranks_on_host);
    if (fit < max_bytes) {
      const double capped = std::exp2(std::floor(std::log2(std::max(fit, 8.0))));
      warnings.push_back("largest collective size capped at " +
                         std::to_string(static_cast<int64_t>(capped)) + " bytes by free memory");
      max_bytes = capped;
    }
  }
  return doubling_sizes(8.0, max_bytes);
}

MemoryBoundRecord probe_record(const KernelProbe& probe, const Measurement& time) {
  MemoryBoundRecord record;
  record.kernel = probe.name;
  record.precision = probe.precision;
  record.rows = probe.rows;
  record.cols = probe.cols;
  record.bytes = probe.bytes;
  record.flops = probe.flops;
  record.probe = true;
  record.time = time;
  return record;
}

}  // namespace parplan::profiler
