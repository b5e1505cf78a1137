// Memory per GPU of each pipeline stage, stacked by what holds it, against the GPU's
// capacity: one small panel per plan, all on the same scale.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/units.h"
#include "tools/report/charts.h"
#include "tools/report/svg.h"

namespace parplan::tools {

namespace {

struct Component {
  const char* name;
  const char* color;
  double (*bytes)(const cost::StageMemory&);
};

const Component kComponents[] = {
    {"weights", "#3566a8", [](const cost::StageMemory& s) { return s.weights_bytes; }},
    {"gradients", "#e07b00", [](const cost::StageMemory& s) { return s.gradients_bytes; }},
    {"optimizer state", "#3c8d40", [](const cost::StageMemory& s) { return s.optimizer_bytes; }},
    {"activations", "#c8423a", [](const cost::StageMemory& s) { return s.activations_bytes; }},
    {"logits, transient, workspace, allocator reserve", "#9a9a9a",
     [](const cost::StageMemory& s) {
       return s.transient_bytes + s.logits_bytes + s.workspace_bytes + s.fragmentation_bytes;
     }},
};

constexpr double kPanelHeight = 128;
constexpr double kPlotTop = 16;
constexpr double kPlotHeight = 84;

}  // namespace

std::string memory_chart(const ReportData& data) {
  // The scale reaches a little above the capacity; far larger plans are cut at the top (with
  // a break mark) so that they do not flatten every plan that fits.
  const double cap_gib = capacity_gib(data.base_job);
  double y_max = cap_gib;
  for (const auto& plan : data.plans) {
    y_max = std::max(y_max, std::min(plan.estimate.memory.peak_bytes / kGiB, 1.3 * cap_gib));
  }
  y_max *= 1.08;
  const double x0 = chart::kLabelWidth;
  const double width = svg::kWidth - x0 - 78;
  const double height = data.by_rank.size() * kPanelHeight + 8;
  std::string body = svg::open(height, "Memory per GPU of each pipeline stage");
  double top = 4;
  for (std::size_t i : data.by_rank) {
    const ReportPlan& plan = data.plans[i];
    const auto& memory = plan.estimate.memory;
    const double base = top + kPlotTop + kPlotHeight;
    auto y_of = [&](double gib) { return base - kPlotHeight * std::min(gib, y_max) / y_max; };
    body += chart::plan_label(plan, top + kPlotTop + kPlotHeight / 2);
    body += svg::rect(x0, top + kPlotTop, width, kPlotHeight, "#f6f6f6") + "\n";
    body += svg::line(x0, base, x0 + width, base, "#666", 1) + "\n";
    const std::size_t stages = memory.stages.size();
    const double slot = width / std::max<std::size_t>(1, stages);
    const double bar = std::max(1.0, slot * 0.7);
    const std::size_t label_every = std::max<std::size_t>(1, (stages + 23) / 24);
    for (std::size_t s = 0; s < stages; ++s) {
      const auto& stage = memory.stages[s];
      const double x = x0 + s * slot + (slot - bar) / 2;
      double acc = 0;
      for (const auto& c : kComponents) {
        const double gib = c.bytes(stage) / kGiB;
        if (gib <= 0) continue;
        char tip[200];
        std::snprintf(tip, sizeof tip, "#%d stage %zu: %s %.2f GiB (stage total %.2f GiB)",
                      plan.rank, s, c.name, gib, stage.total_bytes() / kGiB);
        body += svg::rect(x, y_of(acc + gib), bar, y_of(acc) - y_of(acc + gib), c.color, tip);
        acc += gib;
      }
      if (stage.total_bytes() / kGiB > y_max) {  // cut: two white slashes near the top
        const double yb = y_of(y_max) + 8;
        body += svg::line(x - 1, yb + 3, x + bar + 1, yb - 3, "#fff", 2.5);
        body += svg::line(x - 1, yb + 8, x + bar + 1, yb + 2, "#fff", 2.5);
      }
      body += "\n";
      if (s % label_every == 0) {
        body += svg::text(x + bar / 2, base + 13, std::to_string(s), "middle", 10, "fill=\"#444\"");
      }
    }
    const double cap = capacity_gib(plan.job);
    const double peak = memory.peak_bytes / kGiB;
    const double cap_y = y_of(cap) + 4;
    double peak_y = std::max(y_of(peak) + 4, top + kPlotTop + 10);
    if (std::abs(peak_y - cap_y) < 14) peak_y = cap_y + 14;  // keep both labels readable
    char text[64];
    std::snprintf(text, sizeof text, "%.1f GiB", cap);
    body +=
        svg::line(x0, y_of(cap), x0 + width, y_of(cap), "#b00020", 2, "stroke-dasharray=\"6 4\"");
    body += svg::text(x0 + width + 6, cap_y, text, "start", 12, "fill=\"#b00020\"");
    std::snprintf(text, sizeof text, "peak %.1f", peak);
    body += svg::text(x0 + width + 6, peak_y, text, "start", 11, "fill=\"#111\"") + "\n";
    top += kPanelHeight;
  }
  body += svg::text(x0 + width / 2, height - 2, "pipeline stage", "middle", 11, "fill=\"#444\"");
  body += svg::close();
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& c : kComponents) legend.emplace_back(c.color, c.name);
  legend.emplace_back("#b00020", "GPU memory capacity (dashed)");
  return chart::figure("memory", "Memory per GPU by pipeline stage",
                       "Predicted peak memory of one GPU in each pipeline stage (GiB), stacked by "
                       "what holds it; every panel uses the same scale (bars far above the "
                       "capacity are cut, marked by white slashes). The busiest stage sets the "
                       "plan's peak; above the dashed line the plan does not fit.",
                       body, chart::legend(legend));
}

}  // namespace parplan::tools
