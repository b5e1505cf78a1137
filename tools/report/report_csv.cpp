// report.csv: one row per compared plan, best first; every column name carries its unit.
// Fields are quoted per RFC 4180 when they hold a comma, a quote or a newline.
#include <cmath>
#include <cstdio>

#include "core/units.h"
#include "tools/report/report_writers.h"

namespace parplan::tools {

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Nine significant digits; rounding noise below 1e-12 (e.g. a 1e-16 s bubble) prints as 0.
std::string number(double value) {
  if (std::fabs(value) < 1e-12) value = 0;
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string join_layers(const std::vector<int64_t>& layers) {
  std::string out;
  for (auto n : layers) out += (out.empty() ? "" : " ") + std::to_string(n);
  return out;
}

}  // namespace

std::string report_to_csv(const ReportData& data) {
  std::string out =
      "rank,label,source,method,fits,on_pareto_front,step_time_s,tokens_per_s,"
      "tokens_per_s_per_gpu,model_tflops_per_gpu,mfu_fraction,peak_memory_gib,capacity_gib,"
      "peak_stage,num_micro_batches,tp,pp,dp,cp,ep,vpp,micro_batch_size,sequence_parallel,"
      "recompute,zero_stage,schedule,order,zero_shard_size,layers_per_stage";
  for (const auto& [name, seconds] : data.winner().estimate.breakdown.named()) {
    out += "," + name + "_s";
  }
  out += "\n";
  for (std::size_t i : data.by_rank) {
    const ReportPlan& r = data.plans[i];
    const auto& e = r.estimate;
    const auto& p = r.job.plan;
    std::vector<std::string> row = {std::to_string(r.rank),
                                    csv_field(r.label),
                                    r.source,
                                    to_string(r.job.training.method),
                                    e.memory.fits ? "true" : "false",
                                    r.on_pareto_front ? "true" : "false",
                                    number(e.step_time_s),
                                    number(e.tokens_per_s),
                                    number(e.tokens_per_s_per_gpu),
                                    number(e.model_tflops_per_gpu),
                                    number(e.mfu),
                                    number(e.memory.peak_bytes / kGiB),
                                    number(capacity_gib(r.job)),
                                    std::to_string(e.memory.peak_stage),
                                    std::to_string(e.num_micro_batches),
                                    std::to_string(p.tp),
                                    std::to_string(p.pp),
                                    std::to_string(p.dp),
                                    std::to_string(p.cp),
                                    std::to_string(p.ep),
                                    std::to_string(p.vpp),
                                    std::to_string(p.micro_batch_size),
                                    p.sequence_parallel ? "true" : "false",
                                    to_string(p.recompute),
                                    std::to_string(p.zero_stage),
                                    to_string(p.schedule),
                                    p.order,
                                    std::to_string(p.zero_shard_size),
                                    join_layers(p.layers_per_stage)};
    for (const auto& [name, seconds] : e.breakdown.named()) row.push_back(number(seconds));
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + row[c];
    out += "\n";
  }
  return out;
}

}  // namespace parplan::tools
