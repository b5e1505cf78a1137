// `parplan export --job FILE --format megatron|nemo|torchtitan [--plan P.json]
// [--plan-nearest] [--torchtitan-version v0.2.2|main] [--calibration CAL.json]`: prints the launch
// settings of the job's plan for a training framework. A plan the framework cannot run is refused
// (exit 2) with the key, what the framework supports and the nearest plan it runs; --plan-nearest
// exports that plan instead. With --calibration the memory line is the calibrated model's, and a
// comment line names the calibration. Tested in tests/tools/export_test.cpp.
#include <cstdio>

#include "core/check.h"
#include "core/units.h"
#include "cost_models/step_model.h"
#include "tools/calibration_option.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/export/launch_settings.h"
#include "tools/report/plan_sources.h"

namespace parplan::tools {

namespace {

struct ExportOptions {
  std::string job;
  std::string format;
  std::string plan;
  bool plan_nearest = false;
  std::string torchtitan_version = "v0.2.2";
  std::string calibration;  // --calibration CAL.json (tools/calibration_option.h)
};

// torchtitan main is the Python config of launch_torchtitan_main.cpp; the rest by format.
bool torchtitan_main(const ExportOptions& o) {
  return o.format == "torchtitan" && o.torchtitan_version == "main";
}

// Whether the exported plan fits in GPU memory, by the memory model, and with what margin:
// a launch line for a plan predicted not to fit must say so before anything else.
std::string memory_line(const Job& job) {
  const cost::MemoryEstimate m = cost::estimate_step(job).memory;
  char text[256];
  if (m.fits) {
    std::snprintf(text, sizeof text,
                  "# fits: predicted peak %.1f GiB of %.1f GiB per GPU (%.0f%% headroom)\n",
                  m.peak_bytes / kGiB, m.capacity_bytes / kGiB,
                  100.0 * (1.0 - m.peak_bytes / m.capacity_bytes));
  } else {
    std::snprintf(text, sizeof text,
                  "# DOES NOT FIT: predicted peak %.1f GiB per GPU, over the %.1f GiB there is; "
                  "`parplan plan` finds plans that fit\n",
                  m.peak_bytes / kGiB, m.capacity_bytes / kGiB);
  }
  return text;
}

// Applies the nearest runnable plan while --plan-nearest allows it; otherwise reports the
// refusal and exits 2. Returns what was changed, for the output's header.
std::string resolve_refusals(Job& job, ExportFormat format, bool plan_nearest,
                             const std::string& job_file, bool main_branch) {
  std::string changes;
  for (int round = 0; round < 8; ++round) {
    const auto refusal = main_branch ? torchtitan_main_refusal(job) : export_refusal(job, format);
    if (!refusal) return changes;
    if (plan_nearest && refusal->nearest) {
      changes += "# --plan-nearest: " + refusal->key + " " + refusal->found + " -> " +
                 refusal->nearest_change + "\n";
      job.plan = *refusal->nearest;
      if (auto violation = check_plan(job.model, job.cluster, job.training, job.plan)) {
        throw_plan_violation(*violation, job_file);
      }
      continue;
    }
    std::string message = job_file + ": " + refusal->key + ": found " + refusal->found + "; " +
                          framework_title(format) + (main_branch ? " main" : "") + " supports " +
                          refusal->supported;
    if (refusal->nearest) {
      message +=
          "; nearest plan it runs: " + refusal->nearest_change + " (--plan-nearest exports it)";
    }
    std::fprintf(stderr, "error: %s\n", message.c_str());
    throw QuietExit{2};
  }
  PARPLAN_ASSERT(false);  // every nearest plan removes the key it was refused for
  return changes;
}

void run_export(const ExportOptions& o) {
  Job job = load_job_for_comparison(o.job);
  print_job_warnings(job);
  const auto calibration = apply_calibration_option(job, o.calibration);
  if (!o.plan.empty()) {
    job.plan = load_plan_file(o.plan, job);
    job.plan_given = true;
  } else if (!job.plan_given) {
    // The default plan (docs/job_file.md#plan) must still be valid to be launched.
    if (auto violation = check_plan(job.model, job.cluster, job.training, job.plan)) {
      throw_plan_violation(*violation, o.job);
    }
  }
  const auto format = parse_export_format(o.format);
  PARPLAN_ASSERT(format.has_value());  // CLI11 checked the choice
  const bool main_branch = torchtitan_main(o);
  const std::string changes = resolve_refusals(job, *format, o.plan_nearest, o.job, main_branch);
  const std::string calibrated = calibration ? "# " + calibration_line(calibration) + "\n" : "";
  const std::string text =
      changes + calibrated + memory_line(job) +
      (main_branch ? export_torchtitan_main(job) : export_launch_settings(job, *format));
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace

void register_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand(
      "export", "Print the job's plan as launch settings for Megatron-LM, NeMo or torchtitan");
  cmd->add_option("--job", o->job, "Job file")->required();
  cmd->add_option("--format", o->format,
                  "megatron (Megatron-LM flags), nemo (Megatron-Bridge YAML) or torchtitan (TOML)")
      ->required()
      ->check(CLI::IsMember({"megatron", "nemo", "torchtitan"}));
  cmd->add_option("--plan", o->plan,
                  "Export this plan instead of the job's (plan keys, or a job file's plan)");
  cmd->add_option("--torchtitan-version", o->torchtitan_version,
                  "torchtitan release the config is for: v0.2.2 (TOML, default) or main "
                  "(b5bcd76c, Python config)")
      ->check(CLI::IsMember({"v0.2.2", "main"}));
  cmd->add_flag("--plan-nearest", o->plan_nearest,
                "When the framework cannot run the plan, export the nearest plan it runs");
  add_calibration_option(cmd, o->calibration);
  cmd->callback([o] { run_export(*o); });
}

}  // namespace parplan::tools
