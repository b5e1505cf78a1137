#include "planner/plan_difference.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace parplan::planner {

namespace {

// Plan keys whose values move each breakdown part (the cost model's inputs for that part).
const std::map<std::string, std::vector<std::string>>& keys_behind_part() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      // The critical stage's compute: its share of the layers (layers_per_stage) too.
      {"compute", {"method", "tp", "cp", "ep", "etp", "micro_batch_size", "layers_per_stage"}},
      {"recompute", {"method", "recompute"}},
      {"tp_comm", {"tp", "sequence_parallel"}},
      {"cp_comm", {"cp"}},
      {"ep_comm", {"ep", "etp", "moe_dispatcher", "moe_a2a_overlap"}},
      {"pipeline_bubble", {"pp", "vpp", "schedule", "micro-batches", "layers_per_stage"}},
      {"dp_comm", {"method", "dp", "zero_stage"}},
      {"fsdp_comm", {"method", "zero_stage", "dp"}},
      {"optimizer", {"method", "zero_stage", "dp"}},
      // Calibrated overheads (core/calibration.h): one per step, one per micro-batch.
      {"step_overhead", {}},
      {"micro_batch_overhead", {"micro-batches"}},
  };
  return keys;
}

// A plan key's value as the plan's JSON writes it ("micro-batches": the estimate's count).
std::string key_value(const Job& job, const cost::StepEstimate& estimate, const std::string& key) {
  if (key == "micro-batches") return std::to_string(estimate.num_micro_batches);
  if (key == "method") return to_string(job.training.method);
  // Layers per stage ("10,10,10,11,10,10,10,9"), the default split's too, not per chunk.
  if (key == "layers_per_stage") {
    return stage_layer_text(layers_per_chunk(job.model, job.plan), job.plan.pp);
  }
  const Json value = parallel_plan_to_json(job.plan).value(key, Json());
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::vector<PartDifference> largest_part_differences(const Job& job_a, const cost::StepEstimate& a,
                                                     const Job& job_b, const cost::StepEstimate& b,
                                                     std::size_t max_parts) {
  std::vector<PartDifference> diffs;
  const auto parts_a = a.breakdown.named();
  const auto parts_b = b.breakdown.named();
  const double noise_s = 0.005 * std::max(a.step_time_s, b.step_time_s);
  // Parts by name: a part named only when not zero may be missing from one of the two.
  auto seconds_of = [](const auto& parts, const std::string& name) {
    for (const auto& [part, seconds] : parts) {
      if (part == name) return seconds;
    }
    return 0.0;
  };
  std::vector<std::string> names;
  for (const auto* parts : {&parts_a, &parts_b}) {  // pointers: no copy of either list
    for (const auto& entry : *parts) {
      if (std::find(names.begin(), names.end(), entry.first) == names.end()) {
        names.push_back(entry.first);
      }
    }
  }
  for (const std::string& part : names) {
    const double d = seconds_of(parts_a, part) - seconds_of(parts_b, part);
    if (d != 0 && std::fabs(d) >= noise_s) diffs.push_back({part, d, {}});
  }
  std::stable_sort(diffs.begin(), diffs.end(), [](const auto& x, const auto& y) {
    return std::fabs(x.a_minus_b_s) > std::fabs(y.a_minus_b_s);
  });
  if (diffs.size() > max_parts) diffs.resize(max_parts);
  for (auto& diff : diffs) {
    const auto keys = keys_behind_part().find(diff.part);
    if (keys == keys_behind_part().end()) continue;  // a part no plan key moves
    // Layer splits compare only between plans of the same stages and chunks.
    const bool same_chunks = job_a.plan.pp == job_b.plan.pp && job_a.plan.vpp == job_b.plan.vpp;
    for (const auto& key : keys->second) {
      if (key == "layers_per_stage" && !same_chunks) continue;
      std::string va = key_value(job_a, a, key);
      std::string vb = key_value(job_b, b, key);
      if (va != vb) diff.keys.push_back({key, std::move(va), std::move(vb)});
    }
  }
  return diffs;
}

}  // namespace parplan::planner
