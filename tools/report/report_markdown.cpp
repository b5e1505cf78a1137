// report.md: the explanation and the numbers as GitHub-flavoured Markdown tables.
#include <algorithm>
#include <filesystem>

#include "core/cluster_shape.h"
#include "core/plural.h"
#include "core/units.h"
#include "tools/report/report_writers.h"
#include "tools/report/why.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

std::string md_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const auto& c : cells) out += " " + c + " |";
  return out + "\n";
}

std::string table_head(const std::vector<std::string>& cells, std::size_t left_columns) {
  std::string out = row(cells) + "|";
  for (std::size_t i = 0; i < cells.size(); ++i) out += i < left_columns ? "---|" : "---:|";
  return out + "\n";
}

}  // namespace

std::string report_title(const Job& job) {
  // Partial nodes and part-used nodes in the words of core/cluster_shape.h.
  const ClusterSpec& c = job.cluster;
  if (c.num_gpus % c.node.gpus_per_node != 0 || c.installed_gpus_per_node > 0) {
    return job.model.name + " on " + cluster_shape_text(c);
  }
  return job.model.name + " on " + std::to_string(job.cluster.num_nodes) + " × " +
         job.cluster.node.name + " (" + count_of(job.cluster.num_gpus, "GPU") + ")";
}

std::string report_subtitle(const ReportData& data) {
  const Job& job = data.base_job;
  std::vector<std::string> methods;
  for (const auto& plan : data.plans) {
    const std::string m = to_string(plan.job.training.method);
    if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
  }
  std::string method_text;
  for (const auto& m : methods) method_text += (method_text.empty() ? "" : ", ") + m;
  return "global batch " + std::to_string(job.training.global_batch_size) + " × " +
         std::to_string(job.training.seq_length) + " tokens, " + to_string(job.training.precision) +
         ", method " + method_text + ", framework " + to_string(job.framework) + ", GPU memory " +
         fixed(capacity_gib(job), 1) + " GiB";
}

std::string report_to_markdown(const ReportData& data) {
  std::string out = "# parplan report: " + report_title(data.base_job) + "\n\n";
  out += report_subtitle(data) + ". Job file: `" +
         std::filesystem::path(data.base_job.file).filename().string() + "`.\n\n";
  out += "## Why this plan wins\n\n";
  for (const auto& sentence : data.why) out += "- " + md_escape(sentence) + "\n";
  if (!data.notes.empty()) {
    out += "\nNotes:\n\n";
    for (const auto& note : data.notes) out += "- " + md_escape(note) + "\n";
  }

  out += "\n## Plans, best first\n\n";
  out += table_head({"#", "label", "method", "plan", "step s", "tokens/s per GPU", "MFU",
                     "peak GiB", "fits", "Pareto"},
                    4);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    const auto& e = r.estimate;
    out += row({std::to_string(r.rank), md_escape(r.label), to_string(r.job.training.method),
                plan_summary(r.job.plan), fixed(e.step_time_s, 4), fixed(e.tokens_per_s_per_gpu, 1),
                percent(e.mfu), fixed(e.memory.peak_bytes / kGiB, 2),
                e.memory.fits ? "yes" : "**no**", r.on_pareto_front ? "yes" : ""});
  }

  out += "\n## Step-time breakdown (seconds)\n\n";
  std::vector<std::string> head = {"#"};
  for (const auto& [name, s] : data.winner().estimate.breakdown.named()) head.push_back(name);
  head.push_back("step");
  out += table_head(head, 1);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    std::vector<std::string> cells = {std::to_string(r.rank)};
    for (const auto& [name, s] : r.estimate.breakdown.named()) cells.push_back(fixed(s, 4));
    cells.push_back(fixed(r.estimate.step_time_s, 4));
    out += row(cells);
  }

  out += "\n## Memory per pipeline stage (GiB per GPU)\n\n";
  out += table_head({"#", "peak stage", "capacity", "stages 0, 1, ..."}, 1);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    std::string stages;
    for (const auto& s : r.estimate.memory.stages) {
      stages += (stages.empty() ? "" : ", ") + fixed(s.total_bytes() / kGiB, 2);
    }
    out += row({std::to_string(r.rank), std::to_string(r.estimate.memory.peak_stage),
                fixed(capacity_gib(r.job), 1), stages});
  }

  out += "\n## Plan keys\n\n";
  out += table_head({"#", "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size", "micro-batches",
                     "sequence_parallel", "recompute", "zero_stage", "schedule", "order"},
                    1);
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    const auto& p = r.job.plan;
    out +=
        row({std::to_string(r.rank), std::to_string(p.tp), std::to_string(p.pp),
             std::to_string(p.dp), std::to_string(p.cp), std::to_string(p.ep),
             std::to_string(p.vpp), std::to_string(p.micro_batch_size),
             std::to_string(r.estimate.num_micro_batches), p.sequence_parallel ? "true" : "false",
             to_string(p.recompute), std::to_string(p.zero_stage), to_string(p.schedule), p.order});
  }
  out +=
      "\nPredicted by parplan 0.1.0's cost model (not measured). The breakdown parts sum to the "
      "step time; they describe the critical pipeline stage.\n";
  return out;
}

}  // namespace parplan::tools
