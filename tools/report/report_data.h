// The numbers a strategy-comparison report shows: one entry per compared plan (a label, the
// job with that plan and training method, and its step estimate), ranked (plans that fit,
// by step time, then the rest), the time-vs-memory Pareto front of the plans that fit, and
// the pipeline events of the winner for its timeline. Built once; every writer
// (report_writers.h) reads it. Tested in tests/tools/report_test.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/job.h"
#include "cost_models/step_model.h"

namespace parplan::tools {

struct ReportPlan {
  std::string label;   // "job plan", "plan file a.json", "search #2", "lora: search #1"
  std::string source;  // "job", "file" or "search"
  Job job;             // the job with this plan and training method
  cost::StepEstimate estimate;
  int rank = 0;  // 1 = best
  bool on_pareto_front = false;
  // A search plan standing for a layout: its other variants that fit (planner/plan_groups.h).
  int64_t folded_variants = 0;
};

struct ReportData {
  Job base_job;                      // the job as loaded (model, cluster, training)
  std::vector<ReportPlan> plans;     // in the order given
  std::vector<std::size_t> by_rank;  // indices of `plans`, best first
  std::vector<std::size_t> pareto;   // indices on the front, by increasing peak memory
  cost::StepEstimate winner_detail;  // the winner again, with its pipeline events
  std::vector<std::string> why;      // "why this plan wins", one sentence per entry
  // Caveats derived from the inputs (e.g. unmodelled keys), then the winner's 80% intervals
  // and extrapolations (tools/prediction_trust.h).
  std::vector<std::string> notes;

  const ReportPlan& winner() const { return plans[by_rank.front()]; }
};

// Ranks the plans, marks the Pareto front, re-estimates the winner with pipeline events and
// writes the explanation. Identical plans (same keys and method) are merged, their labels
// joined. Throws parplan::Error when `plans` is empty.
ReportData build_report(const Job& base_job, std::vector<ReportPlan> plans);

// Estimates one plan for the report.
ReportPlan make_report_plan(const Job& job, std::string label, std::string source);

// "tp4 pp4 dp4 vpp5 mbs1 sp selective z1": the plan keys that differ from the defaults.
std::string plan_summary(const ParallelPlan& plan);

// Capacity of the job's GPU in GiB.
double capacity_gib(const Job& job);

}  // namespace parplan::tools
