// `parplan simulate --job FILE [--json] [--trace OUT.json]`: one plan, predicted.
#include <cstdio>

#include "cost_models/step_model.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/estimate_json.h"

namespace parplan::tools {

namespace {

struct SimulateOptions {
  std::string job;
  bool json = false;
};

void run_simulate(const SimulateOptions& options) {
  const Job job = load_job(options.job);
  const cost::StepEstimate estimate = cost::estimate_step(job);
  if (options.json) {
    print_json(estimate_to_json(job, estimate));
  } else {
    std::fputs(estimate_to_text(job, estimate).c_str(), stdout);
  }
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  auto* cmd = app.add_subcommand("simulate", "Predict step time and memory of the job's plan");
  cmd->add_option("--job", options->job, "Job file (JSON, see README)")->required();
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->callback([options] { run_simulate(*options); });
}

}  // namespace parplan::tools
