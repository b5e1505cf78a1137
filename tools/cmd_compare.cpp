// `parplan compare --job FILE [--plan P.json]... [--top K] [--method sft,lora] --out DIR
// [--fix KEY=VALUE]... [--max-memory-fraction F] [--all-variants] [--json]`: compares
// strategies side by side and writes DIR/report.{html,md,csv,json}.
// Tested in tests/tools/cli_test.cpp and report_golden_test.cpp.
#include <cstdio>

#include "core/check.h"
#include "core/plural.h"
#include "planner/plan_groups.h"
#include "planner/prediction_interval.h"
#include "tools/calibration_option.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/memory_fit.h"
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
  std::vector<std::string> fixes;  // the search's pins, as `plan --fix`
  double max_memory_fraction = 0;  // the search's fit, as `plan --max-memory-fraction`; 0: the
                                   // default headroom (planner/prediction_interval.h)
  bool all_variants = false;
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
  sources.search.fixes = planner::parse_fixes(o.fixes);
  sources.search.max_memory_fraction = o.max_memory_fraction > 0
                                           ? o.max_memory_fraction
                                           : planner::recommended_max_memory_fraction();
  sources.search.distinct = !o.all_variants;
  if (sources.top_k > 0) planner::check_fixes_fit_cluster(job, sources.search.fixes);
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
  std::printf("compared %s of %s\n",
              count_of(static_cast<int64_t>(data.plans.size()), "plan").c_str(),
              report_title(job).c_str());
  std::printf("winner: %s (%s), %s per step\n", plan_name(data.winner()).c_str(),
              plan_summary(data.winner().job.plan).c_str(),
              human_seconds(data.winner().estimate.step_time_s).c_str());
  std::printf("  %s\n", memory_fit_text(data.winner().estimate.memory).c_str());
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
  cmd->add_option("--fix", o->fixes,
                  "Pin a plan key of the search, KEY=VALUE (repeatable), as plan --fix");
  cmd->add_option("--max-memory-fraction", o->max_memory_fraction,
                  "The search keeps plans whose peak memory is at most this fraction of the GPU's "
                  "(default: the headroom the memory model's measured error needs)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_flag(
      "--all-variants", o->all_variants,
      std::string("Search plans include every variant of a layout (") + planner::kFoldedKeys + ")");
  add_calibration_option(cmd, o->calibration);
  cmd->callback([o] { run_compare(*o); });
}

}  // namespace parplan::tools
