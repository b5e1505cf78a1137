// Where compared plans come from: the job's own plan, plan files (`--plan P.json`: an
// object of plan keys, or a whole job file whose "plan" is used) and the planner's search
// (`--top K`), optionally for several training methods side by side (`--method sft,lora`).
// Each plan is checked against the job's model, cluster and training like the job's own.
// Tested in tests/tools/report_test.cpp and tests/tools/cli_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/job.h"
#include "planner/search.h"
#include "tools/report/report_data.h"

namespace parplan::tools {

// Search options listing distinct layouts, the default of `compare` and the report.
inline planner::SearchOptions distinct_search() {
  planner::SearchOptions options;
  options.distinct = true;
  return options;
}

struct PlanSources {
  bool include_job_plan = true;  // when the job file has one
  std::vector<std::string> plan_files;
  int top_k = 0;  // 0: no search
  // The search's pins, memory fraction and distinct layouts (top_k is set from top_k above).
  planner::SearchOptions search = distinct_search();
  std::vector<TrainingMethod> methods;  // empty: the job's own method
};

// Reads P.json and returns its plan with the job framework's defaults applied; throws
// InputError (naming P.json) for bad keys or a plan that does not fit the job.
ParallelPlan load_plan_file(const std::string& path, const Job& job);

// "pretrain" | "sft" | "lora"; throws InputError for anything else.
TrainingMethod parse_training_method(const std::string& name);

// Loads the job without enforcing its plan's rules, then enforces them only when the file
// has a plan (a job without one is valid for a search).
Job load_job_for_comparison(const std::string& path);

// Estimates every plan the sources name (labels: "job plan", "file P.json", "search #k",
// prefixed with the method when several are compared).
std::vector<ReportPlan> collect_plans(const Job& job, const PlanSources& sources);

}  // namespace parplan::tools
