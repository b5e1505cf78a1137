// `parplan export --job FILE --format megatron|nemo|torchtitan [--plan P.json]`: prints the
// launch settings of the job's plan for a training framework. Tested in
// tests/tools/export_test.cpp.
#include <cstdio>

#include "core/check.h"
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
};

void run_export(const ExportOptions& o) {
  Job job = load_job_for_comparison(o.job);
  print_job_warnings(job);
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
  const std::string text = export_launch_settings(job, *format);
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
  cmd->callback([o] { run_export(*o); });
}

}  // namespace parplan::tools
