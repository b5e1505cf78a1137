#include "tools/report/plan_sources.h"

#include <filesystem>

#include "core/check.h"
#include "core/frameworks/plan_defaults.h"
#include "planner/prediction_interval.h"
#include "planner/search.h"

namespace parplan::tools {

ParallelPlan load_plan_file(const std::string& path, const Job& job) {
  const Json object = load_json_file(path);
  if (!object.is_object()) {
    throw InputError(path, "", describe_json_value(object),
                     "an object of plan keys, or a job file with a \"plan\" object");
  }
  const bool job_file = object.contains("plan");
  const Json& plan_json = job_file ? object.at("plan") : object;
  const std::string key_path = job_file ? "plan" : "";
  if (!plan_json.is_object()) {
    throw InputError(path, key_path, describe_json_value(plan_json), "an object of plan keys");
  }
  ParallelPlan plan = parse_parallel_plan(plan_json, path, key_path, job.cluster.num_gpus);
  apply_framework_plan_defaults(job.framework, plan, job.training);
  if (auto violation = check_plan(job.model, job.cluster, job.training, plan)) {
    throw_plan_violation(*violation, path);
  }
  return plan;
}

TrainingMethod parse_training_method(const std::string& name) {
  if (name == "pretrain") return TrainingMethod::Pretrain;
  if (name == "sft") return TrainingMethod::Sft;
  if (name == "lora") return TrainingMethod::Lora;
  throw InputError("--method", "", "\"" + name + "\"", "pretrain, sft or lora");
}

Job load_job_for_comparison(const std::string& path) {
  // A plan the job gives is compared, so it must be valid; without one, any search runs.
  return load_job(path, PlanCheck::EnforceIfGiven);
}

std::vector<ReportPlan> collect_plans(const Job& job, const PlanSources& sources) {
  std::vector<TrainingMethod> methods = sources.methods;
  if (methods.empty()) methods.push_back(job.training.method);
  std::vector<ReportPlan> plans;
  for (TrainingMethod method : methods) {
    Job base = job;
    base.training.method = method;
    const std::string prefix = methods.size() > 1 ? std::string(to_string(method)) + ": " : "";
    if (sources.include_job_plan && job.plan_given) {
      plans.push_back(make_report_plan(base, prefix + "job plan", "job"));
    }
    for (const auto& path : sources.plan_files) {
      Job with_plan = base;
      with_plan.plan = load_plan_file(path, base);
      // The file name, or the path as given when two plan files share a name.
      const std::string name = std::filesystem::path(path).filename().string();
      int same_name = 0;
      for (const auto& other : sources.plan_files) {
        same_name += std::filesystem::path(other).filename().string() == name;
      }
      plans.push_back(
          make_report_plan(with_plan, prefix + "file " + (same_name > 1 ? path : name), "file"));
    }
    if (sources.top_k > 0) {
      planner::SearchOptions options = sources.search;
      options.top_k = sources.top_k;
      const planner::SearchResult result = planner::search_plans(base, options);
      int k = 1;
      for (const auto& ranked : result.top) {
        ReportPlan plan;
        plan.label = prefix + "search #" + std::to_string(k++);
        plan.source = "search";
        plan.job = base;
        plan.job.plan = ranked.plan;
        plan.estimate = ranked.estimate;
        plan.folded_variants = ranked.folded_variants;
        plans.push_back(std::move(plan));
      }
    }
  }
  return plans;
}

}  // namespace parplan::tools
