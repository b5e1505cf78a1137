#include "tools/report/report_data.h"

#include <algorithm>
#include <numeric>

#include "core/check.h"
#include "core/units.h"
#include "tools/prediction_trust.h"
#include "tools/report/why.h"

namespace parplan::tools {

namespace {

bool same_plan(const ReportPlan& a, const ReportPlan& b) {
  return parallel_plan_to_json(a.job.plan) == parallel_plan_to_json(b.job.plan) &&
         a.job.training.method == b.job.training.method &&
         a.job.training.lora_rank == b.job.training.lora_rank;
}

// Plans that fit first, by step time; then the others by step time. Stable: input order
// breaks ties.
std::vector<std::size_t> rank_order(const std::vector<ReportPlan>& plans) {
  std::vector<std::size_t> order(plans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& ea = plans[a].estimate;
    const auto& eb = plans[b].estimate;
    if (ea.memory.fits != eb.memory.fits) return ea.memory.fits;
    if (ea.step_time_s != eb.step_time_s) return ea.step_time_s < eb.step_time_s;
    return ea.memory.peak_bytes < eb.memory.peak_bytes;
  });
  return order;
}

// Plans that fit and that no other fitting plan beats in both step time and peak memory.
std::vector<std::size_t> pareto_front(const std::vector<ReportPlan>& plans) {
  std::vector<std::size_t> fitting;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].estimate.memory.fits) fitting.push_back(i);
  }
  std::stable_sort(fitting.begin(), fitting.end(), [&](std::size_t a, std::size_t b) {
    const auto& ea = plans[a].estimate;
    const auto& eb = plans[b].estimate;
    if (ea.memory.peak_bytes != eb.memory.peak_bytes) {
      return ea.memory.peak_bytes < eb.memory.peak_bytes;
    }
    return ea.step_time_s < eb.step_time_s;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : fitting) {
    if (front.empty() || plans[i].estimate.step_time_s < plans[front.back()].estimate.step_time_s) {
      front.push_back(i);
    }
  }
  return front;
}

}  // namespace

double capacity_gib(const Job& job) { return job.cluster.node.gpu.memory_gib; }

std::string plan_summary(const ParallelPlan& p) {
  std::string out =
      "tp" + std::to_string(p.tp) + " pp" + std::to_string(p.pp) + " dp" + std::to_string(p.dp);
  if (p.cp > 1) out += " cp" + std::to_string(p.cp);
  if (p.ep > 1) out += " ep" + std::to_string(p.ep);
  if (p.vpp > 1) out += " vpp" + std::to_string(p.vpp);
  out += " mbs" + std::to_string(p.micro_batch_size);
  if (p.sequence_parallel && p.tp > 1) out += " sp";
  if (p.recompute != Recompute::None) out += std::string(" rc-") + to_string(p.recompute);
  out += " z" + std::to_string(p.zero_stage);
  if (p.schedule != ScheduleKind::OneFOneB && p.schedule != ScheduleKind::Interleaved) {
    out += std::string(" ") + to_string(p.schedule);
  }
  if (!p.layers_per_stage.empty()) out += " split";
  return out;
}

ReportPlan make_report_plan(const Job& job, std::string label, std::string source) {
  ReportPlan plan;
  plan.label = std::move(label);
  plan.source = std::move(source);
  plan.job = job;
  plan.estimate = cost::estimate_step(job);
  return plan;
}

ReportData build_report(const Job& base_job, std::vector<ReportPlan> plans) {
  PARPLAN_CHECK(!plans.empty(), "no plan to report on");
  ReportData data;
  data.base_job = base_job;
  for (auto& plan : plans) {
    auto same = std::find_if(data.plans.begin(), data.plans.end(),
                             [&](const ReportPlan& seen) { return same_plan(seen, plan); });
    if (same != data.plans.end()) {
      same->label += " = " + plan.label;
    } else {
      data.plans.push_back(std::move(plan));
    }
  }
  data.by_rank = rank_order(data.plans);
  for (std::size_t r = 0; r < data.by_rank.size(); ++r) {
    data.plans[data.by_rank[r]].rank = static_cast<int>(r + 1);
  }
  data.pareto = pareto_front(data.plans);
  for (std::size_t i : data.pareto) data.plans[i].on_pareto_front = true;
  cost::StepOptions options;
  options.record_pipeline_events = true;
  data.winner_detail = cost::estimate_step(data.winner().job, options);
  data.why = explain_winner(data);
  data.notes = report_notes(data);
  for (auto& sentence :
       prediction_trust_sentences(data.winner().job, data.winner().estimate, "the winner")) {
    data.notes.push_back(std::move(sentence));
  }
  return data;
}

}  // namespace parplan::tools
