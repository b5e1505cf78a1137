// report.json: the job, every compared plan with all its keys, estimate, breakdown and
// memory per pipeline stage, the ranking, the Pareto front, the winner's pipeline timeline
// summary and the explanation.
#include <algorithm>
#include <filesystem>

#include "core/units.h"
#include "tools/estimate_json.h"
#include "tools/report/report_writers.h"

namespace parplan::tools {

namespace {

Json timeline_json(const ReportData& data) {
  const cost::PipelineResult& p = data.winner_detail.pipeline;
  Json stages = Json::array();
  for (std::size_t s = 0; s < p.busy_s.size(); ++s) {
    const double finish = s < p.finish_s.size() ? p.finish_s[s] : 0;
    stages.push_back({{"stage", s},
                      {"busy_s", p.busy_s[s]},
                      {"idle_s", std::max(0.0, p.makespan_s - p.busy_s[s])},
                      {"finish_s", finish}});
  }
  return {{"plan", data.winner().label},
          {"makespan_s", p.makespan_s},
          {"num_events", p.events.size()},
          {"stages", stages}};
}

}  // namespace

Json report_to_json(const ReportData& data) {
  Json plans = Json::array();
  for (std::size_t i : data.by_rank) {
    const ReportPlan& plan = data.plans[i];
    Json entry = estimate_to_json(plan.job, plan.estimate);
    entry["label"] = plan.label;
    entry["source"] = plan.source;
    entry["rank"] = plan.rank;
    entry["method"] = to_string(plan.job.training.method);
    entry["on_pareto_front"] = plan.on_pareto_front;
    entry["capacity_gib"] = capacity_gib(plan.job);
    plans.push_back(entry);
  }
  Json front = Json::array();
  for (std::size_t i : data.pareto) front.push_back(data.plans[i].label);
  Json job = job_to_json(data.base_job);
  job.erase("plan");
  job["job_file"] = std::filesystem::path(data.base_job.file).filename().string();
  job["num_nodes"] = data.base_job.cluster.num_nodes;
  return {{"report_version", 1},
          {"generator", "parplan 0.1.0"},
          {"job", job},
          {"winner", data.winner().label},
          {"why", data.why},
          {"notes", data.notes},
          {"plans", plans},
          {"pareto_front", front},
          {"timeline", timeline_json(data)}};
}

}  // namespace parplan::tools
