// `parplan simulate --job FILE [--json] [--trace OUT.json]`: one plan, predicted.
#include <cstdio>

#include "core/units.h"
#include "cost_models/memory_model.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

struct SimulateOptions {
  std::string job;
  bool json = false;
};

Json memory_json(const cost::MemoryEstimate& mem) {
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

void run_simulate(const SimulateOptions& options) {
  const Job job = load_job(options.job);
  const cost::MemoryEstimate mem = cost::estimate_memory(job);
  if (options.json) {
    Json out = {{"plan", parallel_plan_to_json(job.plan)},
                {"peak_memory_gib", mem.peak_bytes / kGiB},
                {"fits", mem.fits},
                {"memory", memory_json(mem)}};
    print_json(out);
    return;
  }
  std::printf("%s on %lld x %s (%lld GPUs)\n", job.model.name.c_str(),
              static_cast<long long>(job.cluster.num_nodes), job.cluster.node.name.c_str(),
              static_cast<long long>(job.cluster.num_gpus));
  TextTable table({"stage", "weights", "grads", "optimizer", "activations", "transient", "logits",
                   "workspace", "total GiB"});
  for (const auto& s : mem.stages) {
    table.add_row({std::to_string(s.stage), fixed(s.weights_bytes / kGiB, 2),
                   fixed(s.gradients_bytes / kGiB, 2), fixed(s.optimizer_bytes / kGiB, 2),
                   fixed(s.activations_bytes / kGiB, 2), fixed(s.transient_bytes / kGiB, 2),
                   fixed(s.logits_bytes / kGiB, 2),
                   fixed((s.workspace_bytes + s.fragmentation_bytes) / kGiB, 2),
                   fixed(s.total_bytes() / kGiB, 2)});
  }
  std::fputs(table.render({0, 1, 2, 3, 4, 5, 6, 7, 8}).c_str(), stdout);
  std::printf("peak memory: %.2f GiB on stage %lld of %.1f GiB -> %s\n", mem.peak_bytes / kGiB,
              static_cast<long long>(mem.peak_stage), mem.capacity_bytes / kGiB,
              mem.fits ? "fits" : "DOES NOT FIT");
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  auto* cmd = app.add_subcommand("simulate", "Predict memory and step time of the job's plan");
  cmd->add_option("--job", options->job, "Job file (JSON, see README)")->required();
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->callback([options] { run_simulate(*options); });
}

}  // namespace parplan::tools
