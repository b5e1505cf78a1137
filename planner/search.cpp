#include "planner/search.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <set>

#include "core/units.h"
#include "cost_models/memory_model.h"
#include "planner/parallel_for.h"

namespace parplan::planner {

namespace {

// Plans evaluated between two stopping checks. Fixed (not derived from the thread count) so
// the set of evaluated plans, and hence every count, is the same for any thread count.
constexpr int64_t kBatch = 256;

// One thread's scratch: a job whose plan is swapped per evaluation, and the per-layer costs
// of every layer-cost key it has met.
struct Worker {
  Job job;
  std::map<cost::LayerTimesKey, cost::LayerTimes> layer_cache;

  const cost::LayerTimes& layers_for(const ParallelPlan& plan) {
    job.plan = plan;
    const auto key = cost::layer_times_key(plan);
    auto it = layer_cache.find(key);
    if (it == layer_cache.end())
      it = layer_cache.emplace(key, cost::compute_layer_times(job)).first;
    return it->second;
  }
};

}  // namespace

SearchResult search_plans(const Job& job, const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult result;
  result.threads = resolve_threads(options.threads);
  Enumeration space = enumerate_plans(job, options.fixes, options.limits);
  result.considered = space.considered;
  result.rejected = space.rejected;
  result.valid = static_cast<int64_t>(space.plans.size());
  const int64_t n = result.valid;

  std::vector<Worker> workers(result.threads, Worker{job, {}});
  const double capacity = job.cluster.node.gpu.memory_gib * kGiB * options.max_memory_fraction;

  // Phase 1: memory, then a lower bound of the step time for the plans that fit.
  std::vector<double> peak(n, 0.0);
  std::vector<double> bound(n, std::numeric_limits<double>::infinity());
  std::vector<char> fits(n, 0);
  parallel_for(n, result.threads, [&](int w, int64_t i) {
    Worker& worker = workers[w];
    worker.job.plan = space.plans[i];
    peak[i] = cost::estimate_memory(worker.job).peak_bytes;
    fits[i] = peak[i] <= capacity ? 1 : 0;
    if (fits[i]) {
      const cost::LayerTimes& layers = worker.layers_for(space.plans[i]);
      bound[i] = cost::compute_lower_bound_s(worker.job, layers);
    }
  });
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (fits[i]) order.push_back(i);
  }
  result.feasible = static_cast<int64_t>(order.size());
  if (n - result.feasible > 0) result.rejected["out-of-memory"] += n - result.feasible;

  const bool by_memory = options.objective == Objective::MemoryHeadroom;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (by_memory && peak[a] != peak[b]) return peak[a] < peak[b];
    return bound[a] < bound[b];
  });

  // Phase 2: exact step times in bound order, batch by batch, until no remaining plan can
  // enter the top K (its bound, or its memory, rules it out).
  std::vector<double> step_time(n, std::numeric_limits<double>::infinity());
  std::vector<int64_t> evaluated;
  const int64_t k = std::max(1, options.top_k);
  auto better = [&](int64_t a, int64_t b) {
    if (by_memory) {
      if (peak[a] != peak[b]) return peak[a] < peak[b];
    }
    if (step_time[a] != step_time[b]) return step_time[a] < step_time[b];
    return a < b;
  };
  std::size_t next = 0;
  while (next < order.size()) {
    if (!options.pareto && static_cast<int64_t>(evaluated.size()) >= k) {
      std::vector<int64_t> best = evaluated;
      std::nth_element(best.begin(), best.begin() + (k - 1), best.end(), better);
      const int64_t kth = best[k - 1];
      const int64_t candidate = order[next];
      const bool cannot_enter =
          by_memory ? peak[candidate] > peak[kth] : bound[candidate] >= step_time[kth];
      if (cannot_enter) break;
    }
    const std::size_t end = std::min(order.size(), next + static_cast<std::size_t>(kBatch));
    parallel_for(static_cast<int64_t>(end - next), result.threads, [&](int w, int64_t j) {
      const int64_t i = order[next + static_cast<std::size_t>(j)];
      Worker& worker = workers[w];
      const cost::LayerTimes& layers = worker.layers_for(space.plans[i]);
      step_time[i] = cost::estimate_step(worker.job, layers).step_time_s;
    });
    for (std::size_t j = next; j < end; ++j) evaluated.push_back(order[j]);
    next = end;
    if (options.progress) {
      options.progress(static_cast<int64_t>(evaluated.size()), static_cast<int64_t>(order.size()));
    }
  }
  result.evaluated = static_cast<int64_t>(evaluated.size());
  result.pruned_by_bound = result.feasible - result.evaluated;

  // The winners, with their full estimates.
  std::sort(evaluated.begin(), evaluated.end(), better);
  auto full_estimate = [&](int64_t i) {
    Worker& worker = workers[0];
    const cost::LayerTimes& layers = worker.layers_for(space.plans[i]);
    return RankedPlan{space.plans[i], cost::estimate_step(worker.job, layers)};
  };
  for (std::size_t j = 0; j < evaluated.size() && static_cast<int64_t>(j) < k; ++j) {
    result.top.push_back(full_estimate(evaluated[j]));
  }
  if (options.pareto) {
    std::vector<int64_t> by_peak = evaluated;
    std::sort(by_peak.begin(), by_peak.end(), [&](int64_t a, int64_t b) {
      if (peak[a] != peak[b]) return peak[a] < peak[b];
      if (step_time[a] != step_time[b]) return step_time[a] < step_time[b];
      return a < b;
    });
    double best_time = std::numeric_limits<double>::infinity();
    for (int64_t i : by_peak) {
      if (step_time[i] < best_time) {
        best_time = step_time[i];
        result.pareto.push_back(full_estimate(i));
      }
    }
  }
  std::set<cost::LayerTimesKey> keys;
  for (const auto& worker : workers) {
    for (const auto& entry : worker.layer_cache) keys.insert(entry.first);
  }
  result.layer_cost_keys = static_cast<int64_t>(keys.size());
  result.search_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parplan::planner
