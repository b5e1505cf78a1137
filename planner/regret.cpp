#include "planner/regret.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "core/check.h"
#include "planner/prediction_interval.h"

namespace parplan::planner {

namespace {

// "A100 at 312 TFLOP/s": the GPU and the dense peak the run's precision computes at (fp16
// and bf16 share the 16-bit tensor-core peak), the key under which MFUs compare.
std::string gpu_peak(const Job& job) {
  const GpuSpec& gpu = job.cluster.node.gpu;
  char peak[64];
  std::snprintf(peak, sizeof peak, " at %.0f TFLOP/s",
                gpu.computed_peak_tflops(job.training.precision));
  return gpu.name + peak;
}

// How much slower the published plan is predicted than the best of it and the search's best.
double regret_of(const cost::StepEstimate& published, const SearchResult& search) {
  const double best_s =
      search.top.empty() ? published.step_time_s
                         : std::min(search.top.front().estimate.step_time_s, published.step_time_s);
  return published.step_time_s / best_s - 1.0;
}

// The search options with the run's features fixed: only the layout is searched.
SearchOptions keeping_features(SearchOptions options, const ParallelPlan& plan) {
  options.fixes.recompute = plan.recompute;
  options.fixes.zero_stage = plan.zero_stage;
  options.fixes.sequence_parallel = plan.sequence_parallel;
  options.fixes.cp = plan.cp;
  options.fixes.ep = plan.ep;
  return options;
}

// The highest MFU measured (at the reference step time) per GPU and peak, and its run.
using HighestMfu = std::map<std::string, std::pair<double, std::string>>;

void count_and_hold_against_mfu(RegretSummary& summary, const HighestMfu& highest) {
  for (auto& row : summary.runs) {
    const auto& [mfu, run_id] = highest.at(row.gpu_peak);
    row.highest_measured_mfu = mfu;
    row.highest_measured_mfu_run = run_id;
    summary.within_threshold += !row.is_claim();
    summary.same_features_within_threshold += row.same_features_within_threshold();
    summary.defensible_claims += row.claim_defensible();
    if (row.is_claim()) {
      ++summary.claims;
      summary.claims_within_measured_mfu += row.within_measured_mfu();
    }
  }
}

}  // namespace

RegretSummary analyse_regret(const std::vector<MeasuredRun>& runs, int threads) {
  RegretSummary summary;
  HighestMfu highest_mfu;
  SearchOptions search;
  search.top_k = 1;
  search.threads = threads;
  // The best plan is the one `plan` would recommend: it keeps the default memory headroom
  // (prediction_interval.h), so a claim never rests on a plan predicted to fit only because the
  // memory model under-predicts. Published plans are evaluated as they ran.
  search.max_memory_fraction = recommended_max_memory_fraction();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const MeasuredRun& run = runs[i];
    RunRegret row;
    row.run_index = i;
    row.measured_step_time_s = run.reference_step_time_s;
    SearchResult all;
    try {
      row.published = cost::estimate_step(run.job);
      all = search_plans(run.job, search);
    } catch (const Error& e) {
      summary.failed.push_back({i, e.what()});
      continue;
    }
    row.gpu_peak = gpu_peak(run.job);
    const double measured_mfu =
        row.published.mfu * row.published.step_time_s / run.reference_step_time_s;
    auto& highest = highest_mfu[row.gpu_peak];
    if (measured_mfu > highest.first) highest = {measured_mfu, run.id};
    if (all.top.empty()) continue;
    SearchResult same;
    try {
      same = search_plans(run.job, keeping_features(search, run.job.plan));
    } catch (const Error& e) {
      summary.failed.push_back({i, e.what()});
      continue;
    }
    row.best = all.top.front();
    row.regret = regret_of(row.published, all);
    row.same_features_regret = regret_of(row.published, same);
    if (row.is_claim()) {
      Job best_job = run.job;
      best_job.plan = row.best.plan;
      row.behind_claim =
          largest_part_differences(best_job, row.best.estimate, run.job, row.published);
    }
    summary.runs.push_back(std::move(row));
  }
  count_and_hold_against_mfu(summary, highest_mfu);
  return summary;
}

}  // namespace parplan::planner
