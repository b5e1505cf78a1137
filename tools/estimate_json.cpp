#include "tools/estimate_json.h"

#include <algorithm>

#include "core/cluster_shape.h"
#include "core/plural.h"
#include "core/presets.h"
#include "core/units.h"
#include "cost_models/moe_dispatch.h"
#include "tools/cli_common.h"
#include "tools/prediction_trust.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

// Seconds to hours as the run's scale needs them: "2.8 s", "4.2 min", "3.09 h".
std::string run_duration(double seconds) {
  if (seconds >= 3600) return fixed(seconds / 3600, 2) + " h";
  if (seconds >= 60) return fixed(seconds / 60, 1) + " min";
  return human_seconds(seconds);
}

// " dispatcher=deepep (auto) a2a_overlap=on" for a MoE plan with expert parallelism.
std::string moe_dispatch_text(const Job& job) {
  if (!job.model.moe || job.plan.ep <= 1) return "";
  std::string out = std::string(" dispatcher=") + to_string(cost::resolved_moe_dispatcher(job));
  if (job.plan.moe_dispatcher == MoeDispatcher::Auto) out += " (auto)";
  if (job.plan.moe_a2a_overlap) out += " a2a_overlap=on";
  return out;
}

}  // namespace

Json breakdown_to_json(const cost::StepBreakdown& breakdown) {
  Json out = Json::object();
  for (const auto& [name, seconds] : breakdown.named()) out[name] = seconds;
  return out;
}

Json memory_to_json(const cost::MemoryEstimate& mem) {
  Json stages = Json::array();
  for (const auto& s : mem.stages) {
    stages.push_back({{"stage", s.stage},
                      {"params", s.params},
                      {"weights_gib", s.weights_bytes / kGiB},
                      {"gradients_gib", s.gradients_bytes / kGiB},
                      {"optimizer_gib", s.optimizer_bytes / kGiB},
                      {"activations_gib", s.activations_bytes / kGiB},
                      {"transient_gib", s.transient_bytes / kGiB},
                      {"logits_gib", s.logits_bytes / kGiB},
                      {"workspace_gib", s.workspace_bytes / kGiB},
                      {"fragmentation_gib", s.fragmentation_bytes / kGiB},
                      {"in_flight_micro_batch_chunks", s.in_flight_chunks},
                      {"total_gib", s.total_bytes() / kGiB}});
  }
  return {{"peak_stage", mem.peak_stage},
          {"capacity_gib", mem.capacity_bytes / kGiB},
          {"stages", stages}};
}

Json estimate_to_json(const Job& job, const cost::StepEstimate& e) {
  Json out = {{"plan", parallel_plan_to_json(job.plan)},
              {"step_time_s", e.step_time_s},
              {"tokens_per_s", e.tokens_per_s},
              {"tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
              {"model_tflops_per_gpu", e.model_tflops_per_gpu},
              {"mfu", e.mfu},
              {"peak_memory_gib", e.memory.peak_bytes / kGiB},
              {"fits", e.memory.fits},
              {"breakdown", breakdown_to_json(e.breakdown)},
              {"num_micro_batches", e.num_micro_batches},
              {"critical_stage", e.critical_stage},
              {"p2p_time_s", e.p2p_s},
              {"hidden_dp_comm_s", e.hidden_dp_comm},
              {"model_flops", e.model_flops},
              {"hardware_flops", e.hardware_flops},
              {"num_gpus", job.cluster.num_gpus},
              {"memory", memory_to_json(e.memory)}};
  // The dispatcher the time model assumed for a MoE plan with expert parallelism ("auto"
  // resolved: cost_models/moe_dispatch.h).
  if (job.model.moe && job.plan.ep > 1) {
    out["moe_dispatcher"] = to_string(cost::resolved_moe_dispatcher(job));
  }
  if (!job.plan.framework_default_keys.empty()) {
    out["framework_default_keys"] = job.plan.framework_default_keys;
  }
  // Only for jobs with training.total_tokens: other jobs print what they always did.
  if (const auto run = cost::estimate_time_to_train(job, e))
    out.update(time_to_train_to_json(*run));
  out.update(prediction_trust_to_json(job, e));
  return out;
}

std::string plan_cell(const ParallelPlan& p) {
  char text[200];
  std::snprintf(text, sizeof text, "tp%lld pp%lld dp%lld%s%s%s%s mbs%lld%s %s%s z%d%s",
                static_cast<long long>(p.tp), static_cast<long long>(p.pp),
                static_cast<long long>(p.dp),
                p.cp > 1 ? (" cp" + std::to_string(p.cp)).c_str() : "",
                p.ep > 1 ? (" ep" + std::to_string(p.ep)).c_str() : "",
                p.etp > 0 ? (" etp" + std::to_string(p.etp)).c_str() : "",
                p.vpp > 1 ? (" vpp" + std::to_string(p.vpp)).c_str() : "",
                static_cast<long long>(p.micro_batch_size), p.sequence_parallel ? " sp" : "",
                p.recompute == Recompute::None ? "norc" : recompute_description(p).c_str(),
                p.offload_activation_layers > 0
                    ? (" off" + std::to_string(p.offload_activation_layers)).c_str()
                    : "",
                p.zero_stage, p.schedule == ScheduleKind::ZeroBubble ? " zb" : "");
  return std::string(text) + (p.moe_a2a_overlap ? " a2a" : "") +
         (p.layers_per_stage.empty() ? "" : " split");
}

Json time_to_train_to_json(const cost::TimeToTrain& t) {
  auto when = [&](std::optional<double> value) { return value ? Json(*value) : Json(nullptr); };
  auto if_progresses = [&](double value) { return t.progresses ? Json(value) : Json(nullptr); };
  return {{"total_tokens", t.total_tokens},
          {"time_to_train_days", if_progresses(t.time_to_train_days)},
          {"gpu_hours", if_progresses(t.gpu_hours)},
          {"energy_mwh", t.progresses ? when(t.energy_mwh) : Json(nullptr)},
          {"cost_usd", t.progresses ? when(t.cost_usd) : Json(nullptr)},
          {"cluster_power_w", when(t.cluster_power_w)},
          {"goodput", t.goodput},
          {"cluster_mtbf_s", t.cluster_mtbf_s},
          {"checkpoint_bytes", t.checkpoint_bytes},
          {"checkpoint_write_s", t.checkpoint_write_s},
          {"checkpoint_interval_s", t.checkpoint_interval_s}};
}

std::string time_to_train_to_text(const cost::TimeToTrain& t) {
  char line[512];
  std::string out;
  if (t.progresses) {
    std::snprintf(line, sizeof line,
                  "time to train  %.3g tokens in %.1f days at goodput %.1f%%: %.3g GPU-hours",
                  t.total_tokens, t.time_to_train_days, 100 * t.goodput, t.gpu_hours);
    out += line;
    if (t.energy_mwh) {
      std::snprintf(line, sizeof line, ", %.0f MWh", *t.energy_mwh);
      out += line;
    }
    if (t.cost_usd) {
      std::snprintf(line, sizeof line, ", $%.3g", *t.cost_usd);
      out += line;
    }
    out += "\n";
  } else {
    out +=
        "time to train  never: failures come faster than the run can checkpoint and restart "
        "(goodput 0)\n";
  }
  std::snprintf(line, sizeof line,
                "failures       cluster MTBF %s; checkpoint %.3g GB written in %s, every %s\n",
                run_duration(t.cluster_mtbf_s).c_str(), t.checkpoint_bytes / kGB,
                run_duration(t.checkpoint_write_s).c_str(),
                run_duration(t.checkpoint_interval_s).c_str());
  out += line;
  return out;
}

// TFLOP/s with a tenth for GPUs; three significant digits below 1 (a CPU measured by
// `parplan profile` reaches hundredths, which "%.1f" printed as 0.0).
namespace {
std::string tflops_text(double tflops) {
  if (tflops >= 1.0 || tflops <= 0.0) return fixed(tflops, 1);
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", tflops);
  return text;
}
}  // namespace

std::string estimate_to_text(const Job& job, const cost::StepEstimate& e) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%s on %s, %s, framework %s\n", job.model.name.c_str(),
                cluster_shape_text(job.cluster).c_str(), to_string(job.training.precision),
                to_string(job.framework));
  out += line;
  const auto& p = job.plan;
  std::snprintf(
      line, sizeof line,
      "plan: tp=%lld pp=%lld dp=%lld cp=%lld ep=%lld vpp=%lld mbs=%lld sp=%s recompute=%s "
      "zero=%d schedule=%s%s%s%s%s (%s)\n",
      static_cast<long long>(p.tp), static_cast<long long>(p.pp), static_cast<long long>(p.dp),
      static_cast<long long>(p.cp), static_cast<long long>(p.ep), static_cast<long long>(p.vpp),
      static_cast<long long>(p.micro_batch_size), p.sequence_parallel ? "on" : "off",
      recompute_description(p).c_str(), p.zero_stage, to_string(p.schedule),
      p.etp > 0 ? (" etp=" + std::to_string(p.etp)).c_str() : "",
      p.offload_activation_layers > 0
          ? (" offload_activation_layers=" + std::to_string(p.offload_activation_layers)).c_str()
          : "",
      moe_dispatch_text(job).c_str(),
      p.layers_per_stage.empty() ? "" : (" layers_per_stage=" + layer_split_description(p)).c_str(),
      count_of(e.num_micro_batches, "micro-batch").c_str());
  out += line;
  if (!p.framework_default_keys.empty()) {
    out += "      " + join_names(p.framework_default_keys) + ": " + to_string(job.framework) +
           "'s defaults (the job's plan does not set them)\n";
  }
  // A measured CPU profile's devices are ranks.
  const char* device = job.cluster.node.gpu.vendor == "cpu" ? "rank" : "GPU";
  std::snprintf(line, sizeof line,
                "\nstep time      %s\nthroughput     %.0f tokens/s (%.0f per %s)\n"
                "model TFLOP/s  %s per %s, MFU %.1f%%\n"
                "peak memory    %.2f GiB of %.1f GiB (stage %lld) -> %s\n",
                human_seconds(e.step_time_s).c_str(), e.tokens_per_s, e.tokens_per_s_per_gpu,
                device, tflops_text(e.model_tflops_per_gpu).c_str(), device, 100 * e.mfu,
                e.memory.peak_bytes / kGiB, e.memory.capacity_bytes / kGiB,
                static_cast<long long>(e.memory.peak_stage),
                e.memory.fits ? "fits" : "DOES NOT FIT");
  out += line;
  out += prediction_trust_to_text(job, e);
  if (!e.memory.fits) {
    for (const auto& stage : e.memory.stages) {
      if (stage.stage != e.memory.peak_stage) continue;
      std::snprintf(
          line, sizeof line,
          "               weights %.1f, gradients %.1f, optimizer %.1f, activations "
          "%.1f (%s in flight), logits %.1f, other %.1f GiB\n"
          "               (more recomputation, pp, tp or a higher ZeRO stage lowers "
          "it; parplan plan --job FILE searches plans that fit)\n",
          stage.weights_bytes / kGiB, stage.gradients_bytes / kGiB, stage.optimizer_bytes / kGiB,
          stage.activations_bytes / kGiB,
          count_of(stage.in_flight_chunks, "micro-batch chunk").c_str(), stage.logits_bytes / kGiB,
          (stage.transient_bytes + stage.workspace_bytes + stage.fragmentation_bytes) / kGiB);
      out += line;
    }
  }
  out +=
      "\nwhere the time goes (critical pipeline stage " + std::to_string(e.critical_stage) + "):\n";
  TextTable table({"part", "seconds", "share"});
  for (const auto& [name, seconds] : e.breakdown.named()) {
    if (seconds <= 0) continue;
    table.add_row({name, fixed(seconds, 4), percent(seconds / e.step_time_s)});
  }
  table.add_row(
      {"total", fixed(e.breakdown.total(), 4), percent(e.breakdown.total() / e.step_time_s)});
  out += table.render({1, 2});
  if (e.hidden_dp_comm > 0) {
    out += "data-parallel communication hidden under backward compute: " +
           human_seconds(e.hidden_dp_comm) + "\n";
  }
  if (const auto run = cost::estimate_time_to_train(job, e)) {
    out += "\n" + time_to_train_to_text(*run);
  }
  return out;
}

}  // namespace parplan::tools
