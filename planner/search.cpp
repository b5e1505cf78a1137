#include "planner/search.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <set>

#include "core/units.h"
#include "cost_models/memory_model.h"
#include "planner/parallel_for.h"
#include "planner/plan_groups.h"

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

// What the search knows of each plan of the space (indexed as Enumeration::plans).
struct PlanFigures {
  std::vector<double> peak;       // peak memory, bytes
  std::vector<double> bound;      // lower bound of the step time (infinite if it does not fit)
  std::vector<char> fits;         // peak within the capacity
  std::vector<double> step_time;  // exact step time once evaluated, else infinite
  std::vector<int64_t> group;     // distinct layouts: the plan's group (grouped is true)
  bool grouped = false;
  explicit PlanFigures(int64_t n)
      : peak(n, 0.0),
        bound(n, std::numeric_limits<double>::infinity()),
        fits(n, 0),
        step_time(n, std::numeric_limits<double>::infinity()),
        group(n, 0) {}
};

// The objective's order of evaluated plans: least peak memory first (memory headroom), then
// shortest step time, then enumeration order.
struct BetterPlan {
  const PlanFigures& f;
  bool by_memory;
  bool operator()(int64_t a, int64_t b) const {
    if (by_memory) {
      if (f.peak[a] != f.peak[b]) return f.peak[a] < f.peak[b];
    }
    if (f.step_time[a] != f.step_time[b]) return f.step_time[a] < f.step_time[b];
    return a < b;
  }
};

// Phase 1: every plan's peak memory, and a lower bound of the step time for those that fit.
void screen_plans(const Enumeration& space, std::vector<Worker>& workers, int threads,
                  double capacity_bytes, PlanFigures& f) {
  parallel_for(static_cast<int64_t>(space.plans.size()), threads, [&](int w, int64_t i) {
    Worker& worker = workers[w];
    worker.job.plan = space.plans[i];
    f.peak[i] = cost::estimate_memory(worker.job).peak_bytes;
    f.fits[i] = f.peak[i] <= capacity_bytes ? 1 : 0;
    if (f.fits[i]) {
      const cost::LayerTimes& layers = worker.layers_for(space.plans[i]);
      f.bound[i] = cost::compute_lower_bound_s(worker.job, layers);
    }
  });
}

// The plans that fit, in the order to evaluate them: by lower bound (by peak memory first for
// memory headroom), enumeration order among equals.
std::vector<int64_t> feasible_in_bound_order(const PlanFigures& f, bool by_memory) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < static_cast<int64_t>(f.fits.size()); ++i) {
    if (f.fits[i]) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (by_memory && f.peak[a] != f.peak[b]) return f.peak[a] < f.peak[b];
    return f.bound[a] < f.bound[b];
  });
  return order;
}

// The best evaluated plan of each group (each plan alone when groups are plans), in
// evaluation order of their groups' first appearance.
std::vector<int64_t> best_of_each_group(const std::vector<int64_t>& evaluated, const PlanFigures& f,
                                        const BetterPlan& better) {
  if (!f.grouped) return evaluated;
  std::map<int64_t, std::size_t> slot;
  std::vector<int64_t> best;
  for (int64_t i : evaluated) {
    auto [it, added] = slot.try_emplace(f.group[i], best.size());
    if (added) {
      best.push_back(i);
    } else if (better(i, best[it->second])) {
      best[it->second] = i;
    }
  }
  return best;
}

// Whether no plan from `candidate` on (in bound order) can enter the top K groups: K groups
// are evaluated and the candidate's bound (its peak, for memory headroom) cannot beat the
// K-th group's best. Nor can it improve a top-K group: its time is at least its bound, which
// is at least the K-th group's best time, at least that group's best.
bool top_k_settled(const std::vector<int64_t>& evaluated, int64_t candidate, int64_t k,
                   const PlanFigures& f, const BetterPlan& better) {
  if (static_cast<int64_t>(evaluated.size()) < k) return false;
  std::vector<int64_t> best = best_of_each_group(evaluated, f, better);
  if (static_cast<int64_t>(best.size()) < k) return false;
  std::nth_element(best.begin(), best.begin() + (k - 1), best.end(), better);
  const int64_t kth = best[k - 1];
  return better.by_memory ? f.peak[candidate] > f.peak[kth]
                          : f.bound[candidate] >= f.step_time[kth];
}

// Phase 2: exact step times in `order`, batch by batch, until no remaining plan can enter the
// top K (its bound, or its memory, rules it out); returns the evaluated plans in order.
std::vector<int64_t> evaluate_until_settled(const std::vector<int64_t>& order,
                                            const Enumeration& space, std::vector<Worker>& workers,
                                            const SearchOptions& options, int threads,
                                            PlanFigures& f) {
  const bool by_memory = options.objective == Objective::MemoryHeadroom;
  const BetterPlan better{f, by_memory};
  const int64_t k = std::max(1, options.top_k);
  std::vector<int64_t> evaluated;
  std::size_t next = 0;
  while (next < order.size()) {
    if (!options.pareto && top_k_settled(evaluated, order[next], k, f, better)) break;
    const std::size_t end = std::min(order.size(), next + static_cast<std::size_t>(kBatch));
    parallel_for(static_cast<int64_t>(end - next), threads, [&](int w, int64_t j) {
      const int64_t i = order[next + static_cast<std::size_t>(j)];
      Worker& worker = workers[w];
      const cost::LayerTimes& layers = worker.layers_for(space.plans[i]);
      f.step_time[i] = cost::estimate_step(worker.job, layers).step_time_s;
    });
    for (std::size_t j = next; j < end; ++j) evaluated.push_back(order[j]);
    next = end;
    if (options.progress) {
      options.progress(static_cast<int64_t>(evaluated.size()), static_cast<int64_t>(order.size()));
    }
  }
  return evaluated;
}

// The time-vs-memory Pareto front of the evaluated plans: by increasing peak memory, each
// plan faster than every plan before it.
std::vector<int64_t> pareto_front(std::vector<int64_t> evaluated, const PlanFigures& f) {
  std::sort(evaluated.begin(), evaluated.end(), BetterPlan{f, true});
  std::vector<int64_t> front;
  double best_time = std::numeric_limits<double>::infinity();
  for (int64_t i : evaluated) {
    if (f.step_time[i] < best_time) {
      best_time = f.step_time[i];
      front.push_back(i);
    }
  }
  return front;
}

// Each plan's group of distinct layouts (planner/plan_groups.h), numbered in enumeration order.
void assign_groups(const Enumeration& space, PlanFigures& f) {
  std::map<PlanGroupKey, int64_t> ids;
  for (std::size_t i = 0; i < space.plans.size(); ++i) {
    const auto [it, added] =
        ids.try_emplace(plan_group_key(space.plans[i]), static_cast<int64_t>(ids.size()));
    f.group[i] = it->second;
  }
  f.grouped = true;
}

// Distinct per-layer cost keys over all workers' caches.
int64_t count_layer_cost_keys(const std::vector<Worker>& workers) {
  std::set<cost::LayerTimesKey> keys;
  for (const auto& worker : workers) {
    for (const auto& entry : worker.layer_cache) keys.insert(entry.first);
  }
  return static_cast<int64_t>(keys.size());
}

}  // namespace

SearchResult search_plans(const Job& job, const SearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SearchResult result;
  result.threads = resolve_threads(options.threads);
  Enumeration space = enumerate_plans(job, options.fixes, options.limits, result.threads);
  std::vector<Worker> workers(result.threads, Worker{job, {}});
  const double capacity = job.cluster.node.gpu.memory_gib * kGiB * options.max_memory_fraction;
  const bool by_memory = options.objective == Objective::MemoryHeadroom;
  PlanFigures figures(static_cast<int64_t>(space.plans.size()));
  if (options.distinct) assign_groups(space, figures);
  screen_plans(space, workers, result.threads, capacity, figures);
  std::vector<int64_t> order = feasible_in_bound_order(figures, by_memory);
  if (order.empty() && !options.limits.memory_savers) {
    // No plan fits: widen the space with the memory savers (SpaceLimits).
    SpaceLimits wider = options.limits;
    wider.memory_savers = true;
    Enumeration offloading = enumerate_plans(job, options.fixes, wider, result.threads);
    if (offloading.plans.size() > space.plans.size()) {
      space = std::move(offloading);
      figures = PlanFigures(static_cast<int64_t>(space.plans.size()));
      if (options.distinct) assign_groups(space, figures);
      screen_plans(space, workers, result.threads, capacity, figures);
      order = feasible_in_bound_order(figures, by_memory);
    }
  }
  result.considered = space.considered;
  result.rejected = space.rejected;
  result.valid = static_cast<int64_t>(space.plans.size());
  result.rejection_examples = space.examples;
  result.feasible = static_cast<int64_t>(order.size());
  if (result.valid - result.feasible > 0) {
    result.rejected["out-of-memory"] += result.valid - result.feasible;
  }

  std::vector<int64_t> evaluated =
      evaluate_until_settled(order, space, workers, options, result.threads, figures);
  result.evaluated = static_cast<int64_t>(evaluated.size());
  result.pruned_by_bound = result.feasible - result.evaluated;

  // The winners, with their full estimates.
  auto full_estimate = [&](int64_t i) {
    Worker& worker = workers[0];
    const cost::LayerTimes& layers = worker.layers_for(space.plans[i]);
    return RankedPlan{space.plans[i], cost::estimate_step(worker.job, layers)};
  };
  std::sort(evaluated.begin(), evaluated.end(), BetterPlan{figures, by_memory});
  const int64_t k = std::max(1, options.top_k);
  if (figures.grouped) {
    // Variants that fit, per group: the listed plan's folded count.
    std::map<int64_t, int64_t> fitting;
    for (int64_t i : order) ++fitting[figures.group[i]];
    std::set<int64_t> listed;
    for (int64_t i : evaluated) {
      if (static_cast<int64_t>(result.top.size()) >= k) break;
      if (!listed.insert(figures.group[i]).second) continue;
      result.top.push_back(full_estimate(i));
      result.top.back().folded_variants = fitting[figures.group[i]] - 1;
      result.folded_variants += result.top.back().folded_variants;
    }
  } else {
    for (std::size_t j = 0; j < evaluated.size() && static_cast<int64_t>(j) < k; ++j) {
      result.top.push_back(full_estimate(evaluated[j]));
    }
  }
  if (order.empty() && result.valid > 0) {
    const auto least = std::min_element(figures.peak.begin(), figures.peak.end());
    result.least_memory = full_estimate(least - figures.peak.begin());
  }
  if (options.pareto) {
    for (int64_t i : pareto_front(evaluated, figures)) result.pareto.push_back(full_estimate(i));
  }
  result.layer_cost_keys = count_layer_cost_keys(workers);
  result.search_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parplan::planner
