#include "tools/report/why.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/units.h"
#include "planner/plan_difference.h"
#include "planner/plan_groups.h"
#include "tools/calibration_text.h"
#include "tools/cli_common.h"
#include "tools/memory_fit.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

// " (vpp 5 vs 1, micro-batches 8 vs 16)": the keys behind a part that differ.
std::string key_list(const std::vector<planner::KeyDifference>& keys) {
  std::string out;
  for (const auto& k : keys) {
    out += (out.empty() ? "" : ", ") + k.key + " " + k.value_a + " vs " + k.value_b;
  }
  return out.empty() ? "" : " (" + out + ")";
}

double gib(double bytes) { return bytes / kGiB; }

}  // namespace

std::string plan_name(const ReportPlan& plan) {
  return "#" + std::to_string(plan.rank) + " " + plan.label;
}

std::string compare_plans(const ReportPlan& a, const ReportPlan& b) {
  const auto& ea = a.estimate;
  const auto& eb = b.estimate;
  std::string out;
  const double gap = eb.step_time_s > 0 ? (eb.step_time_s - ea.step_time_s) / eb.step_time_s : 0;
  if (std::fabs(gap) < 0.005) {
    out = plan_name(a) + " and " + plan_name(b) + " are within 0.5% of each other (" +
          human_seconds(ea.step_time_s) + " vs " + human_seconds(eb.step_time_s) +
          " per step), practically a tie";
  } else {
    out = plan_name(a) + " is " + percent(std::fabs(gap)) + (gap > 0 ? " faster" : " slower") +
          " than " + plan_name(b) + " (" + human_seconds(ea.step_time_s) + " vs " +
          human_seconds(eb.step_time_s) + " per step)";
  }
  // The breakdown parts that differ most, largest first.
  std::string parts;
  for (const auto& d : planner::largest_part_differences(a.job, ea, b.job, eb)) {
    parts += (parts.empty() ? "" : ", ") + human_seconds(std::fabs(d.a_minus_b_s)) +
             (d.a_minus_b_s < 0 ? " less " : " more ") + d.part + key_list(d.keys);
  }
  if (!parts.empty()) out += ": " + parts;
  // Plans of different training methods: the method, not a plan key, drives the gap.
  if (a.job.training.method != b.job.training.method) {
    out += std::string(parts.empty() ? ": " : "; ") + "the training method differs (" +
           to_string(a.job.training.method) + " vs " + to_string(b.job.training.method) +
           "): it, more than any plan key, sets the work per step";
  }
  char memory[160];
  std::snprintf(memory, sizeof memory, "; peak memory %.1f vs %.1f GiB", gib(ea.memory.peak_bytes),
                gib(eb.memory.peak_bytes));
  out += memory;
  if (!eb.memory.fits) out += " (" + plan_name(b) + " does not fit)";
  return out + ".";
}

std::vector<std::string> explain_winner(const ReportData& data) {
  std::vector<std::string> why;
  const ReportPlan& win = data.winner();
  const auto& e = win.estimate;
  char line[512];
  std::snprintf(line, sizeof line,
                "%s (%s) %s: %s per step, %.0f tokens/s per GPU, MFU %.1f%%, peak memory %.1f of "
                "%.1f GiB.",
                plan_name(win).c_str(), plan_summary(win.job.plan).c_str(),
                e.memory.fits ? "is the fastest plan that fits"
                              : "has the shortest step, but no compared plan fits in memory",
                human_seconds(e.step_time_s).c_str(), e.tokens_per_s_per_gpu, 100 * e.mfu,
                gib(e.memory.peak_bytes), capacity_gib(win.job));
  why.push_back(line);
  if (data.by_rank.size() > 1) why.push_back(compare_plans(win, data.plans[data.by_rank[1]]));
  for (std::size_t r = 2; r < data.by_rank.size(); ++r) {
    const ReportPlan& plan = data.plans[data.by_rank[r]];
    if (plan.source == "job") why.push_back(compare_plans(win, plan));
  }
  // Training methods side by side: the best plan of each.
  std::map<std::string, const ReportPlan*> best_by_method;
  for (std::size_t i : data.by_rank) {
    const ReportPlan& plan = data.plans[i];
    best_by_method.try_emplace(to_string(plan.job.training.method), &plan);
  }
  if (best_by_method.size() > 1) {
    std::string text = "Best plan per training method:";
    for (const auto& [method, plan] : best_by_method) {
      text += " " + method + " " + plan_name(*plan) + " " +
              human_seconds(plan->estimate.step_time_s) + ";";
    }
    text.back() = '.';
    why.push_back(text);
  }
  return why;
}

std::vector<std::string> report_notes(const ReportData& data) {
  std::vector<std::string> notes;
  // A calibrated job (parplan --calibration, core/calibration.h) says so in every report.
  const Calibration& calibration = data.base_job.calibration;
  if (!calibration.is_identity()) {
    notes.push_back("Predicted with a calibration fitted to measured runs on " +
                    data.base_job.cluster.node.name + ": " + calibration_factors_text(calibration) +
                    ".");
  }
  std::string unfit;
  int unfit_count = 0;
  for (std::size_t i : data.by_rank) {
    const ReportPlan& plan = data.plans[i];
    if (plan.estimate.memory.fits) continue;
    ++unfit_count;
    char text[160];
    std::snprintf(text, sizeof text, "%s%s (%.1f GiB)", unfit.empty() ? "" : ", ",
                  plan_name(plan).c_str(), gib(plan.estimate.memory.peak_bytes));
    unfit += text;
  }
  const std::string tight =
      tight_memory_note("The winner " + plan_name(data.winner()), data.winner().estimate.memory);
  if (!tight.empty() && data.winner().estimate.memory.fits) notes.push_back(tight + ".");
  int64_t folded = 0;
  for (const auto& plan : data.plans) folded += plan.folded_variants;
  if (folded > 0) {
    notes.push_back("The search plans are distinct layouts: " + std::to_string(folded) +
                    " variants that differ from them only in " + planner::kFoldedKeys +
                    " were folded into them (--all-variants lists them).");
  }
  if (unfit_count > 0) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "%d of %zu plans do not fit in the GPU's %.1f GiB: ", unfit_count,
                  data.plans.size(), capacity_gib(data.base_job));
    notes.push_back(text + unfit + ".");
  }
  // The same plan under different training methods with identical estimates: the cost model
  // does not (yet) tell these methods apart, so the report must not suggest it does.
  std::map<std::string, std::vector<const ReportPlan*>> by_plan;
  for (const auto& plan : data.plans) {
    by_plan[parallel_plan_to_json(plan.job.plan).dump()].push_back(&plan);
  }
  std::vector<std::string> same_methods;
  for (const auto& [key, group] : by_plan) {
    for (std::size_t i = 1; i < group.size(); ++i) {
      const auto& a = group[0]->estimate;
      const auto& b = group[i]->estimate;
      if (group[0]->job.training.method == group[i]->job.training.method) continue;
      if (a.step_time_s == b.step_time_s && a.memory.peak_bytes == b.memory.peak_bytes) {
        const std::string pair = std::string(to_string(group[0]->job.training.method)) + " and " +
                                 to_string(group[i]->job.training.method);
        if (std::find(same_methods.begin(), same_methods.end(), pair) == same_methods.end()) {
          same_methods.push_back(pair);
        }
      }
    }
  }
  for (const auto& pair : same_methods) {
    notes.push_back("Training methods " + pair +
                    " give identical estimates for the same plan: the cost model does not yet "
                    "model them differently (frozen base weights, adapter gradients and optimizer "
                    "state), so their columns show the same numbers, not a measured difference.");
  }
  return notes;
}

}  // namespace parplan::tools
