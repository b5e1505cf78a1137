// `parplan compare --job FILE [--plan P.json]... [--top K] [--method sft,lora] --out DIR
// [--json]`: compares strategies side by side and writes DIR/report.{html,md,csv,json}.
// Tested in tests/tools/cli_test.cpp and report_golden_test.cpp.
#include <cstdio>

#include "core/check.h"
#include "tools/calibration_option.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/report/plan_sources.h"
#include "tools/report/report_writers.h"
#include "tools/report/why.h"

namespace parplan::tools {

namespace {

struct CompareOptions {
  std::string job;
  std::vector<std::string> plans;
  int top = -1;  // -1: not given
  std::vector<std::string> methods;
  std::string out;
  bool json = false;
  std::string profile;
  std::string calibration;
};

void run_compare(const CompareOptions& o) {
  Job job = load_job_for_comparison(o.job);
  print_job_warnings(job);
  apply_profile_option(job, o.profile);
  const auto calibration = apply_calibration_option(job, o.calibration);
  check_report_dir(o.out);
  PlanSources sources;
  sources.plan_files = o.plans;
  sources.top_k = o.top > 0 ? o.top : 0;
  // Default: the job's plan against the five best plans of a search.
  if (o.plans.empty() && o.top < 0) sources.top_k = 5;
  for (const auto& m : o.methods) sources.methods.push_back(parse_training_method(m));
  std::vector<ReportPlan> plans = collect_plans(job, sources);
  if (plans.empty()) {
    throw Error(o.job + ": nothing to compare: the job has no plan, no --plan was given and " +
                "the search found no plan that fits");
  }
  const ReportData data = build_report(job, std::move(plans));
  std::vector<std::string> inputs = {o.job};
  inputs.insert(inputs.end(), o.plans.begin(), o.plans.end());
  const ReportFiles files = write_report(o.out, data, inputs);
  if (o.json) {
    Json out = report_to_json(data);
    add_calibration_key(out, calibration);
    print_json(out);
    return;
  }
  std::printf("compared %zu plans of %s\n", data.plans.size(), report_title(job).c_str());
  std::printf("winner: %s (%s), %s per step\n", plan_name(data.winner()).c_str(),
              plan_summary(data.winner().job.plan).c_str(),
              human_seconds(data.winner().estimate.step_time_s).c_str());
  for (const auto& sentence : data.why) std::printf("  %s\n", sentence.c_str());
  for (const auto& note : data.notes) std::printf("note: %s\n", note.c_str());
  if (calibration) std::printf("%s\n", calibration_line(calibration).c_str());
  std::printf("wrote %s\n      %s\n      %s\n      %s\n", files.html.c_str(),
              files.markdown.c_str(), files.csv.c_str(), files.json.c_str());
}

}  // namespace

void register_compare(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  auto* cmd = app.add_subcommand(
      "compare", "Compare plans side by side and write an HTML/Markdown/CSV/JSON report");
  cmd->add_option("--job", o->job, "Job file (its plan, if any, is compared)")->required();
  cmd->add_option("--plan", o->plans,
                  "Plan file to compare (repeatable): an object of plan keys, or a job file "
                  "whose \"plan\" is used");
  cmd->add_option("--top", o->top,
                  "Also compare the K best plans of a search (default 5 when no --plan is "
                  "given; 0 for none)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--method", o->methods,
                  "Training methods side by side, comma-separated (pretrain, sft, lora)")
      ->delimiter(',')
      ->check(CLI::IsMember({"pretrain", "sft", "lora"}));
  cmd->add_option("--out", o->out, "Folder for the report (created if missing)")->required();
  cmd->add_flag("--json", o->json, "Print report.json's content instead of the summary");
  cmd->add_option(
      "--profile", o->profile,
      "Measured hardware profile (parplan profile) replacing the node preset's figures");
  add_calibration_option(cmd, o->calibration);
  cmd->callback([o] { run_compare(*o); });
}

}  // namespace parplan::tools
