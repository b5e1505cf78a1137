#include "tools/plan_dead_end.h"

#include <algorithm>

#include "core/check.h"
#include "core/cluster_shape.h"
#include "core/units.h"
#include "planner/dead_end.h"
#include "tools/estimate_json.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

std::string gib_text(double bytes) { return fixed(bytes / kGiB, 1) + " GiB"; }

// The rejection reason with the most plans, and its example violation.
std::pair<std::string, int64_t> commonest_rejection(const planner::SearchResult& r) {
  std::pair<std::string, int64_t> best{"", 0};
  for (const auto& [reason, count] : r.rejected) {
    if (reason != "out-of-memory" && count > best.second) best = {reason, count};
  }
  return best;
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// Pins that leave no valid plan where the unpinned space has some: the user's --fix is wrong.
void check_fixes_leave_plans(const Job& job, const std::vector<std::string>& fixes,
                             const planner::SearchOptions& options,
                             const planner::SearchResult& r) {
  if (fixes.empty() || r.valid > 0) return;
  planner::PlanFixes unpinned;
  unpinned.micro_batch_size = 1;
  if (planner::enumerate_plans(job, unpinned, options.limits).plans.empty()) return;
  const std::string pins = joined(fixes, " ");
  if (r.considered == 0) {
    throw InputError("--fix", pins, "no layout of the plan space with them",
                     "pins that leave tp, cp and pp within the space's limits (tp up to " +
                         std::to_string(options.limits.max_tp_nodes) + " nodes and the " +
                         "attention heads, cp up to " + std::to_string(options.limits.max_cp) +
                         ", pp up to the layers) with tp*cp*pp*dp = " +
                         std::to_string(job.cluster.num_gpus) + " GPUs");
  }
  // The rule most pinned combinations break, worded as simulate words it for a job's plan.
  const auto [reason, count] = commonest_rejection(r);
  throw Error("--fix: " + pins + ": no valid plan with these pins (" + std::to_string(count) +
              " of " + std::to_string(r.considered) + " combinations break " + reason +
              "): " + r.rejection_examples.at(reason));
}

// The rejections by reason with an example each, commonest first.
void add_rejections(const planner::SearchResult& r, DeadEnd& out) {
  std::vector<std::pair<std::string, int64_t>> reasons(r.rejected.begin(), r.rejected.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Json list = Json::array();
  for (const auto& [reason, count] : reasons) {
    const auto example = r.rejection_examples.find(reason);
    const std::string text = example == r.rejection_examples.end() ? "" : example->second;
    if (reason != "out-of-memory") {
      out.text +=
          "  " + std::to_string(count) + " x " + reason + (text.empty() ? "" : ": ") + text + "\n";
    }
    list.push_back({{"reason", reason}, {"count", count}, {"example", text}});
  }
  out.json["rejected"] = list;
}

void add_least_memory(const Job& job, const planner::SearchOptions& options,
                      const planner::SearchResult& r, DeadEnd& out) {
  const auto& least = *r.least_memory;
  const double capacity = job.cluster.node.gpu.memory_gib * kGiB * options.max_memory_fraction;
  out.text += "  least memory any plan needs: " + gib_text(least.estimate.memory.peak_bytes) +
              " per GPU, over the " + gib_text(capacity) + " allowed" +
              (options.max_memory_fraction < 1
                   ? " (--max-memory-fraction " + fixed(options.max_memory_fraction, 2) + ")"
                   : "") +
              "\n  closest plan: " + plan_cell(least.plan) + "\n";
  out.json["least_peak_gib"] = least.estimate.memory.peak_bytes / kGiB;
  out.json["capacity_gib"] = capacity / kGiB;
  out.json["closest_plan"] = parallel_plan_to_json(least.plan);
}

void add_larger_cluster(const Job& job, const planner::SearchOptions& options,
                        const std::vector<std::string>& fixes, DeadEnd& out) {
  const auto fit = planner::smallest_fitting_cluster(job, options);
  const std::string& node = job.cluster.node.name;
  if (!fit) {
    out.text += "  no cluster of " + node + " nodes up to " +
                std::to_string(planner::kMaxDeadEndGpus) + " GPUs fits a plan" +
                (fixes.empty() ? "" : " with --fix " + joined(fixes, " ")) + "\n";
    out.json["smallest_fitting_cluster"] = nullptr;
    return;
  }
  out.text += "  smallest cluster that fits: " + std::to_string(fit->num_nodes) + " x " + node +
              " (" + std::to_string(fit->num_gpus) + " GPUs; " +
              std::to_string(fit->num_nodes - 1) +
              (fit->num_nodes - 1 == 1 ? " node does" : " nodes do") + " not), " +
              gib_text(fit->plan.peak_bytes) + " per GPU with " + plan_cell(fit->plan.plan) + "\n";
  out.json["smallest_fitting_cluster"] = {{"num_nodes", fit->num_nodes},
                                          {"num_gpus", fit->num_gpus},
                                          {"peak_gib", fit->plan.peak_bytes / kGiB},
                                          {"plan", parallel_plan_to_json(fit->plan.plan)}};
}

void add_blocking_factor(const Job& job, const planner::SearchOptions& options, DeadEnd& out) {
  if (auto hint = power_of_two_layout_hint(job.cluster)) {
    out.text += "  " + *hint + "\n";
    out.json["layout_hint"] = *hint;
  }
  const auto blocking = planner::blocking_factor(job, options);
  if (!blocking) {
    out.json["blocking_factor"] = nullptr;
    return;
  }
  const std::string gpus = std::to_string(job.cluster.num_gpus);
  out.text += "  the factor " + std::to_string(blocking->factor) + " of " + gpus + " GPUs (" +
              gpus + " = " + blocking->factorization +
              ") blocks every plan: " + std::to_string(blocking->gpus_without) + " GPUs (" + gpus +
              " / " + std::to_string(blocking->factor) + ") have valid plans\n";
  out.json["blocking_factor"] = {{"factor", blocking->factor},
                                 {"factorization", blocking->factorization},
                                 {"gpus_without", blocking->gpus_without}};
}

}  // namespace

DeadEnd explain_dead_end(const Job& job, const std::vector<std::string>& fixes,
                         const planner::SearchOptions& options, const planner::SearchResult& r) {
  check_fixes_leave_plans(job, fixes, options, r);
  DeadEnd out;
  out.json = Json::object();
  if (r.valid == 0) {
    out.text = "no plan fits: none of the " + std::to_string(r.considered) +
               " combinations considered is a valid plan:\n";
    out.json["why"] = "no valid plan";
    add_rejections(r, out);
    add_blocking_factor(job, options, out);
    return out;
  }
  out.text = "no plan fits: " + std::to_string(r.valid) +
             " valid plans, none within the memory of a GPU:\n";
  out.json["why"] = "out of memory";
  add_least_memory(job, options, r, out);
  add_larger_cluster(job, options, fixes, out);
  DeadEnd rejections;  // in the JSON only: the "rejected:" line below the text has the counts
  add_rejections(r, rejections);
  out.json["rejected"] = rejections.json["rejected"];
  return out;
}

}  // namespace parplan::tools
