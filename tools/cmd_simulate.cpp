// `parplan simulate --job FILE [--json] [--trace OUT.json]`: one plan, predicted.
#include <cstdio>

#include "core/atomic_file.h"
#include "core/chrome_trace.h"
#include "core/units.h"
#include "cost_models/layer_cost.h"
#include "cost_models/step_model.h"
#include "cost_models/step_trace.h"
#include "tools/calibration_option.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/estimate_json.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

struct SimulateOptions {
  std::string job;
  bool json = false;
  bool explain = false;
  std::string trace;
  std::string profile;
  std::string calibration;
};

// One layer's ops for one micro-batch on one GPU, with FLOPs, bytes and times.
void print_layer_explanation(const Job& job, bool moe) {
  const cost::ExplainedLayer explained = cost::explain_layer(job, moe);
  const cost::LayerTime& layer = explained.time;
  std::printf("\n%s layer, one micro-batch (%.0f tokens on this GPU):\n", moe ? "MoE" : "dense",
              explained.tokens);
  TextTable table({"op", "kind", "GFLOP", "MB", "fwd ms", "bwd ms", "fwd TFLOP/s"});
  for (const auto& op : explained.ops) {
    table.add_row({op.name, op.kind, op.flops > 0 ? fixed(op.flops / kGiga, 2) : "-",
                   op.bytes > 0 ? fixed(op.bytes / kMega, 1) : "-",
                   fixed(op.forward_s * kMsPerS, 3), fixed(op.backward_s * kMsPerS, 3),
                   op.flops > 0 ? fixed(op.flops / op.forward_s / kTera, 0) : "-"});
  }
  std::fputs(table.render({2, 3, 4, 5, 6}).c_str(), stdout);
  std::printf(
      "forward: compute %.3f ms, tp %.3f, cp %.3f, ep %.3f; backward: compute %.3f ms, "
      "tp %.3f, cp %.3f, ep %.3f; recompute %.3f ms\n",
      layer.forward.compute * kMsPerS, layer.forward.tp_comm * kMsPerS,
      layer.forward.cp_comm * kMsPerS, layer.forward.ep_comm * kMsPerS,
      layer.backward.compute * kMsPerS, layer.backward.tp_comm * kMsPerS,
      layer.backward.cp_comm * kMsPerS, layer.backward.ep_comm * kMsPerS,
      layer.recompute.total() * kMsPerS);
}

void run_simulate(const SimulateOptions& options) {
  Job job = load_job(options.job);
  print_job_warnings(job);
  apply_profile_option(job, options.profile);
  const auto calibration = apply_calibration_option(job, options.calibration);
  if (!options.trace.empty()) check_not_overwriting_inputs(options.trace, {options.job});
  cost::StepOptions step_options;
  step_options.record_pipeline_events = !options.trace.empty();
  const cost::StepEstimate estimate = cost::estimate_step(job, step_options);
  if (!options.trace.empty()) {
    write_chrome_trace(options.trace, cost::step_trace_events(job, estimate));
    if (!options.json)
      std::fprintf(stderr, "wrote %s (open in Perfetto or chrome://tracing)\n",
                   options.trace.c_str());
  }
  if (options.json) {
    Json out = estimate_to_json(job, estimate);
    add_calibration_key(out, calibration);
    print_json(out);
  } else {
    std::fputs(estimate_to_text(job, estimate).c_str(), stdout);
    if (calibration) std::printf("%s\n", calibration_line(calibration).c_str());
    if (options.explain) {
      print_layer_explanation(job, false);
      if (job.model.moe) print_layer_explanation(job, true);
    }
  }
}

}  // namespace

void register_simulate(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  auto* cmd = app.add_subcommand("simulate", "Predict step time and memory of the job's plan");
  cmd->add_option("--job", options->job, "Job file (JSON, see docs/job_file.md)")->required();
  cmd->add_flag("--json", options->json, "Print one JSON object");
  cmd->add_option(
      "--profile", options->profile,
      "Measured hardware profile (parplan profile) replacing the node preset's figures");
  add_calibration_option(cmd, options->calibration);
  cmd->add_option("--trace", options->trace,
                  "Write the predicted step as a Chrome trace (Perfetto: ui.perfetto.dev)");
  cmd->add_flag("--explain", options->explain,
                "Also list every op of a layer with its FLOPs, bytes and time");
  cmd->callback([options] { run_simulate(*options); });
}

}  // namespace parplan::tools
