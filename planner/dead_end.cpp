#include "planner/dead_end.h"

#include <algorithm>
#include <limits>

#include "core/units.h"
#include "cost_models/memory_model.h"
#include "planner/parallel_for.h"

namespace parplan::planner {

namespace {

// The space with the least activation memory per plan: one sequence per micro-batch and full
// recomputation (each only where the user did not pin it). Fit is judged on these: a plan
// that fits with larger micro-batches or less recomputation fits with these too.
PlanFixes least_memory_fixes(PlanFixes fixes) {
  if (!fixes.micro_batch_size) fixes.micro_batch_size = 1;
  if (!fixes.recompute) fixes.recompute = Recompute::Full;
  return fixes;
}

// Whether a plan fits in the job's GPUs' memory (times the fraction) on `num_gpus` GPUs.
std::optional<LeastMemoryPlan> fits_on(const Job& job, int64_t num_gpus,
                                       const SearchOptions& options) {
  const Job sized = with_gpus(job, num_gpus);
  auto least =
      least_memory_plan(sized, least_memory_fixes(options.fixes), options.limits, options.threads);
  const double capacity = job.cluster.node.gpu.memory_gib * kGiB * options.max_memory_fraction;
  if (least && least->peak_bytes <= capacity) return least;
  return std::nullopt;
}

bool has_valid_plan(const Job& job, const SearchOptions& options) {
  PlanFixes fixes = options.fixes;
  if (!fixes.micro_batch_size) fixes.micro_batch_size = 1;
  return !enumerate_plans(job, fixes, options.limits).plans.empty();
}

}  // namespace

Job with_gpus(const Job& job, int64_t num_gpus) {
  Job sized = job;
  const int64_t per_node = job.cluster.node.gpus_per_node;
  sized.cluster.num_gpus = num_gpus;
  sized.cluster.num_nodes = (num_gpus + per_node - 1) / per_node;
  return sized;
}

std::optional<LeastMemoryPlan> least_memory_plan(const Job& job, const PlanFixes& fixes,
                                                 const SpaceLimits& limits, int threads) {
  const Enumeration space = enumerate_plans(job, fixes, limits);
  if (space.plans.empty()) return std::nullopt;
  const int workers = resolve_threads(threads);
  std::vector<Job> scratch(workers, job);
  std::vector<double> peak(space.plans.size(), 0.0);
  parallel_for(static_cast<int64_t>(space.plans.size()), workers, [&](int w, int64_t i) {
    scratch[w].plan = space.plans[i];
    peak[i] = cost::estimate_memory(scratch[w]).peak_bytes;
  });
  const auto least = std::min_element(peak.begin(), peak.end());
  return LeastMemoryPlan{space.plans[least - peak.begin()], *least};
}

std::optional<FittingCluster> smallest_fitting_cluster(const Job& job,
                                                       const SearchOptions& options) {
  const int64_t per_node = job.cluster.node.gpus_per_node;
  int64_t low = job.cluster.num_nodes;  // the largest node count known not to fit
  int64_t high = 0;                     // the smallest known to fit
  std::optional<LeastMemoryPlan> at_high;
  for (int64_t nodes = 2 * low; nodes * per_node <= kMaxDeadEndGpus; nodes *= 2) {
    if (auto fit = fits_on(job, nodes * per_node, options)) {
      high = nodes;
      at_high = fit;
      break;
    }
    low = nodes;
  }
  if (!at_high) return std::nullopt;
  while (high - low > 1) {
    const int64_t mid = low + (high - low) / 2;
    if (auto fit = fits_on(job, mid * per_node, options)) {
      high = mid;
      at_high = fit;
    } else {
      low = mid;
    }
  }
  return FittingCluster{high, high * per_node, *at_high};
}

std::optional<BlockingFactor> blocking_factor(const Job& job, const SearchOptions& options) {
  constexpr int kMaxFactorsTried = 32;
  const int64_t gpus = job.cluster.num_gpus;
  int tried = 0;
  for (int64_t factor : divisors(gpus)) {
    if (factor == 1) continue;
    if (++tried > kMaxFactorsTried) break;
    if (has_valid_plan(with_gpus(job, gpus / factor), options)) {
      return BlockingFactor{factor, gpus / factor, prime_factorization(gpus)};
    }
  }
  return std::nullopt;
}

std::string prime_factorization(int64_t n) {
  std::string out;
  auto add = [&](int64_t prime, int power) {
    out += (out.empty() ? "" : " x ") + std::to_string(prime) +
           (power > 1 ? "^" + std::to_string(power) : "");
  };
  for (int64_t p = 2; p * p <= n; ++p) {
    int power = 0;
    while (n % p == 0) {
      n /= p;
      ++power;
    }
    if (power > 0) add(p, power);
  }
  if (n > 1) add(n, 1);
  return out.empty() ? "1" : out;
}

}  // namespace parplan::planner
