// report.html: one self-contained page (inline CSS and SVG, no scripts, no external
// resources) laid out for a laptop screen and for print (@media print).
#include <cstdio>

#include "core/units.h"
#include "cost_models/time_to_train.h"
#include "tools/report/charts.h"
#include "tools/report/report_writers.h"
#include "tools/report/svg.h"
#include "tools/report/why.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

const char* kStyle = R"css(
:root { color-scheme: light; }
body { margin: 0; background: #fff; color: #111;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; line-height: 1.25; }
h2 { font-size: 19px; margin: 30px 0 6px; }
p.sub { margin: 2px 0; color: #333; }
.why { background: #f3f6fb; border-left: 5px solid #3566a8; padding: 8px 18px 10px; margin-top: 18px; }
.why h2 { margin-top: 6px; }
.why li { margin: 4px 0; }
.notes { background: #fff4e5; border-left: 5px solid #b35300; padding: 6px 18px; margin-top: 12px; }
figure.chart { margin: 30px 0 0; }
figcaption { color: #333; font-size: 14px; margin-bottom: 8px; }
svg { display: block; width: 100%; height: auto; }
ul.legend { list-style: none; padding: 0; margin: 6px 0 0; display: flex; flex-wrap: wrap;
  gap: 4px 20px; font-size: 14px; }
.swatch { display: inline-block; width: 14px; height: 14px; border: 1px solid #555;
  vertical-align: -2px; margin-right: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px;
  font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #d8d8d8; padding: 4px 6px; text-align: right; vertical-align: top; }
td { white-space: nowrap; }
td.wrap { white-space: normal; overflow-wrap: break-word; min-width: 10em; }
th { background: #eef0f3; font-weight: 600; }
th.l, td.l { text-align: left; }
tr.winner td { background: #fff7e6; }
.no { color: #b00020; font-weight: 600; }
footer { margin-top: 32px; font-size: 13px; color: #333; border-top: 1px solid #d8d8d8; padding-top: 8px; }
@media print {
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  h2 { break-after: avoid; }
  figure.chart, table, .why, .notes { break-inside: avoid; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  @page { size: A4; margin: 12mm; }
}
)css";

std::string cell(const std::string& text, bool left = false) {
  return std::string(left ? "<td class=\"l\">" : "<td>") + svg::escape(text) + "</td>";
}

// A left-aligned cell whose text may wrap (labels).
std::string wrap_cell(const std::string& text) {
  return "<td class=\"l wrap\">" + svg::escape(text) + "</td>";
}

// Header cells may break after "_" and "-" so that long key names do not widen the table.
std::string breakable(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += svg::escape(std::string(1, c));
    if (c == '_' || c == '-') out += "<wbr>";
  }
  return out;
}

std::string header_row(const std::vector<std::string>& names, std::size_t left_columns) {
  std::string out = "<tr>";
  for (std::size_t i = 0; i < names.size(); ++i) {
    out +=
        std::string(i < left_columns ? "<th class=\"l\">" : "<th>") + breakable(names[i]) + "</th>";
  }
  return out + "</tr>\n";
}

std::string open_row(const ReportPlan& plan) {
  return plan.rank == 1 ? "<tr class=\"winner\">" : "<tr>";
}

std::string summary_table(const ReportData& data) {
  std::string out =
      "<table>\n" + header_row({"#", "label", "plan", "step time", "tokens/s per GPU",
                                "TFLOP/s per GPU", "MFU", "peak memory", "fits", "Pareto"},
                               3);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    const auto& e = r.estimate;
    out += open_row(r) + cell(std::to_string(r.rank), true) + wrap_cell(r.label) +
           cell(plan_summary(r.job.plan), true) + cell(fixed(e.step_time_s, 3) + " s") +
           cell(fixed(e.tokens_per_s_per_gpu, 0)) + cell(fixed(e.model_tflops_per_gpu, 1)) +
           cell(percent(e.mfu)) + cell(fixed(e.memory.peak_bytes / kGiB, 1) + " GiB") +
           (e.memory.fits ? cell("yes") : "<td class=\"no\">no</td>") +
           cell(r.on_pareto_front ? "yes" : "") + "</tr>\n";
  }
  return out + "</table>\n";
}

std::string keys_table(const ReportData& data) {
  bool any_split = false, any_shard = false;
  for (const auto& r : data.plans) {
    any_split |= !r.job.plan.layers_per_stage.empty();
    any_shard |= r.job.plan.zero_shard_size > 0;
  }
  std::vector<std::string> head = {"#",
                                   "label",
                                   "method",
                                   "tp",
                                   "pp",
                                   "dp",
                                   "cp",
                                   "ep",
                                   "vpp",
                                   "micro_batch_size",
                                   "micro-batches",
                                   "sequence_parallel",
                                   "recompute",
                                   "zero_stage",
                                   "schedule",
                                   "order"};
  if (any_shard) head.push_back("zero_shard_size");
  if (any_split) head.push_back("layers_per_stage");
  std::string out = "<table>\n" + header_row(head, 3);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    const auto& p = r.job.plan;
    out += open_row(r) + cell(std::to_string(r.rank), true) + wrap_cell(r.label) +
           cell(to_string(r.job.training.method), true) + cell(std::to_string(p.tp)) +
           cell(std::to_string(p.pp)) + cell(std::to_string(p.dp)) + cell(std::to_string(p.cp)) +
           cell(std::to_string(p.ep)) + cell(std::to_string(p.vpp)) +
           cell(std::to_string(p.micro_batch_size)) +
           cell(std::to_string(r.estimate.num_micro_batches)) +
           cell(p.sequence_parallel ? "true" : "false") + cell(to_string(p.recompute)) +
           cell(std::to_string(p.zero_stage)) + cell(to_string(p.schedule)) + cell(p.order);
    if (any_shard) out += cell(std::to_string(p.zero_shard_size));
    if (any_split) {
      std::string split;
      for (auto n : p.layers_per_stage) split += (split.empty() ? "" : " ") + std::to_string(n);
      out += cell(split);
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string breakdown_table(const ReportData& data) {
  std::vector<std::string> head = {"#"};
  for (const auto& [name, s] : data.winner().estimate.breakdown.named()) head.push_back(name);
  head.push_back("step");
  std::string out = "<table>\n" + header_row(head, 1);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    out += open_row(r) + cell(std::to_string(r.rank), true);
    for (const auto& [name, s] : r.estimate.breakdown.named()) out += cell(fixed(s, 3));
    out += cell(fixed(r.estimate.step_time_s, 3)) + "</tr>\n";
  }
  return out + "</table>\n";
}

// With training.total_tokens: the whole run of each plan (cost_models/time_to_train.h).
std::string time_to_train_section(const ReportData& data) {
  if (!data.base_job.training.run.total_tokens) return "";
  const bool priced = data.base_job.training.run.gpu_hour_usd.has_value();
  std::vector<std::string> head = {"#",    "plan",      "tokens/s",  "goodput",
                                   "days", "GPU-hours", "energy MWh"};
  if (priced) head.push_back("cost $");
  std::string out = "<table>\n" + header_row(head, 2);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    const auto run = cost::estimate_time_to_train(r.job, r.estimate);
    if (!run) continue;
    const bool done = run->progresses;
    out += open_row(r) + cell(std::to_string(r.rank), true) + cell(plan_summary(r.job.plan), true) +
           cell(fixed(run->tokens_per_s, 0)) + cell(percent(run->goodput)) +
           cell(done ? fixed(run->time_to_train_days, 1) : "never") +
           cell(done ? fixed(run->gpu_hours, 0) : "-") +
           cell(done && run->energy_mwh ? fixed(*run->energy_mwh, 0) : "-");
    if (priced) out += cell(done && run->cost_usd ? fixed(*run->cost_usd, 0) : "-");
    out += "</tr>\n";
  }
  out += "</table>\n";
  const auto& first = data.winner();
  if (const auto run = cost::estimate_time_to_train(first.job, first.estimate)) {
    char line[400];
    std::snprintf(line, sizeof line,
                  "%.3g tokens. Failures: cluster MTBF %.2f h; a %.0f GB checkpoint written in "
                  "%.1f s every %.1f min (Young's interval); goodput = 1 - C/T - (T/2 + R)/M.",
                  run->total_tokens, run->cluster_mtbf_s / 3600, run->checkpoint_bytes / kGB,
                  run->checkpoint_write_s, run->checkpoint_interval_s / 60);
    out += "<p class=\"sub\">" + svg::escape(line) + "</p>\n";
  }
  return "<section>\n<h2>Time to train and cost</h2>\n" + out + "</section>\n";
}

}  // namespace

std::string report_to_html(const ReportData& data) {
  const std::string title = report_title(data.base_job);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>parplan report: " + svg::escape(title) + "</title>\n<style>" +
         std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";
  out += "<header>\n<h1>Parallel plans compared: " + svg::escape(title) + "</h1>\n";
  out += "<p class=\"sub\">" + svg::escape(report_subtitle(data)) + "</p>\n</header>\n";
  out += "<section class=\"why\">\n<h2>Why " + svg::escape(plan_name(data.winner())) +
         " wins</h2>\n<ul>\n";
  for (const auto& sentence : data.why) out += "<li>" + svg::escape(sentence) + "</li>\n";
  out += "</ul>\n</section>\n";
  if (!data.notes.empty()) {
    out += "<section class=\"notes\">\n<ul>\n";
    for (const auto& note : data.notes) out += "<li>" + svg::escape(note) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  out += "<section>\n<h2>Compared plans, best first</h2>\n" + summary_table(data) + "</section>\n";
  out += time_to_train_section(data);
  out += breakdown_chart(data);
  out += memory_chart(data);
  out += throughput_chart(data);
  out += scatter_chart(data);
  out += timeline_chart(data);
  out += "<section>\n<h2>Every plan key</h2>\n" + keys_table(data) + "</section>\n";
  out +=
      "<section>\n<h2>Step-time breakdown, seconds</h2>\n" + breakdown_table(data) + "</section>\n";
  out +=
      "<footer>Predicted by parplan 0.1.0's cost model, not measured. Sizes in GiB (2<sup>30</sup> "
      "bytes), times in seconds. The same numbers are in report.json, report.csv and "
      "report.md.</footer>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace parplan::tools
