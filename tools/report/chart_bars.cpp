// Horizontal bar charts: the step-time breakdown (stacked by part) and throughput with MFU.
#include <algorithm>
#include <cstdio>

#include "tools/cli_common.h"
#include "tools/report/charts.h"
#include "tools/report/svg.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

constexpr double kRowHeight = 42;
constexpr double kTop = 8;
constexpr double kAxisHeight = 40;

// Vertical grid lines with labels under the plot.
std::string x_axis(double x0, double width, double x_max, const std::vector<double>& ticks,
                   double y_top, double y_bottom, const std::string& unit) {
  std::string out;
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : x_max;
  for (double t : ticks) {
    const double x = x0 + width * t / x_max;
    out += svg::line(x, y_top, x, y_bottom, "#d0d0d0", 1) + "\n";
    out +=
        svg::text(x, y_bottom + 16, svg::tick_label(t, step), "middle", 12, "fill=\"#333\"") + "\n";
  }
  out += svg::text(x0 + width / 2, y_bottom + 34, unit, "middle", 12, "fill=\"#333\"") + "\n";
  return out;
}

}  // namespace

std::string breakdown_chart(const ReportData& data) {
  const double n = static_cast<double>(data.by_rank.size());
  const double height = kTop + n * kRowHeight + kAxisHeight;
  double max_s = 0;
  for (const auto& p : data.plans) max_s = std::max(max_s, p.estimate.step_time_s);
  const auto ticks = svg::nice_ticks(0, max_s, 6);
  const double x_max = std::max(ticks.back(), max_s);
  const double x0 = chart::kLabelWidth;
  const double width = svg::kWidth - x0 - 80;
  std::string body = svg::open(height, "Step-time breakdown per plan");
  body += x_axis(x0, width, x_max, ticks, kTop, kTop + n * kRowHeight, "seconds per step");
  std::vector<std::string> used;
  double y = kTop;
  for (std::size_t i : data.by_rank) {
    const ReportPlan& plan = data.plans[i];
    body += chart::plan_label(plan, y + kRowHeight / 2);
    double x = x0;
    for (const auto& [part, seconds] : plan.estimate.breakdown.named()) {
      if (seconds <= 0) continue;
      if (std::find(used.begin(), used.end(), part) == used.end()) used.push_back(part);
      const double w = width * seconds / x_max;
      const std::string tip = "#" + std::to_string(plan.rank) + " " + part + ": " +
                              human_seconds(seconds) + " (" +
                              percent(seconds / plan.estimate.step_time_s) + " of the step)";
      body += svg::rect(x, y + 9, w, 24, chart::part_color(part), tip) + "\n";
      x += w;
    }
    body += svg::text(x + 6, y + kRowHeight / 2 + 5, human_seconds(plan.estimate.step_time_s),
                      "start", 12, "fill=\"#111\"") +
            "\n";
    y += kRowHeight;
  }
  body += svg::close();
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& [part, seconds] : data.winner().estimate.breakdown.named()) {
    if (std::find(used.begin(), used.end(), part) != used.end()) {
      legend.emplace_back(std::string(chart::part_color(part)), part);
    }
  }
  return chart::figure("breakdown", "Where the step time goes",
                       "Seconds per optimizer step on the critical pipeline stage, by part; the "
                       "parts sum to the step time. Exposed communication only (what overlaps "
                       "with compute is hidden).",
                       body, chart::legend(legend));
}

std::string throughput_chart(const ReportData& data) {
  const double n = static_cast<double>(data.by_rank.size());
  const double head = 24;
  const double height = kTop + head + n * kRowHeight + kAxisHeight;
  double max_tokens = 0, max_mfu = 0;
  for (const auto& p : data.plans) {
    max_tokens = std::max(max_tokens, p.estimate.tokens_per_s_per_gpu);
    max_mfu = std::max(max_mfu, 100 * p.estimate.mfu);
  }
  const double gap = 24;
  const double panel = (svg::kWidth - chart::kLabelWidth - gap - 10) / 2;
  const double bar_room = panel - 56;  // the value label follows the longest bar
  const double x_tokens = chart::kLabelWidth;
  const double x_mfu = x_tokens + panel + gap;
  const auto tokens_ticks = svg::nice_ticks(0, max_tokens, 4);
  const auto mfu_ticks = svg::nice_ticks(0, max_mfu, 4);
  const double tokens_max = std::max(tokens_ticks.back(), max_tokens);
  const double mfu_max = std::max(mfu_ticks.back(), max_mfu);
  const double y0 = kTop + head;
  const double y1 = y0 + n * kRowHeight;
  std::string body = svg::open(height, "Throughput and MFU per plan");
  body += svg::text(x_tokens, kTop + 14, "tokens/s per GPU", "start", 13,
                    "font-weight=\"600\" fill=\"#111\"");
  body += svg::text(x_mfu, kTop + 14, "model FLOPs utilization (MFU)", "start", 13,
                    "font-weight=\"600\" fill=\"#111\"");
  body += x_axis(x_tokens, bar_room, tokens_max, tokens_ticks, y0, y1, "tokens/s per GPU");
  body += x_axis(x_mfu, bar_room, mfu_max, mfu_ticks, y0, y1, "MFU, %");
  double y = y0;
  for (std::size_t i : data.by_rank) {
    const ReportPlan& plan = data.plans[i];
    const auto& e = plan.estimate;
    body += chart::plan_label(plan, y + kRowHeight / 2);
    const std::string fill = plan.estimate.memory.fits ? "#3566a8" : "#b8b8b8";
    char value[64];
    const double wt = bar_room * e.tokens_per_s_per_gpu / tokens_max;
    std::snprintf(value, sizeof value, "%.0f", e.tokens_per_s_per_gpu);
    body += svg::rect(x_tokens, y + 9, wt, 24, fill,
                      "#" + std::to_string(plan.rank) + ": " + value + " tokens/s per GPU");
    body +=
        svg::text(x_tokens + wt + 4, y + kRowHeight / 2 + 5, value, "start", 12, "fill=\"#111\"") +
        "\n";
    const double wm = bar_room * 100 * e.mfu / mfu_max;
    std::snprintf(value, sizeof value, "%.1f%%", 100 * e.mfu);
    body += svg::rect(x_mfu, y + 9, wm, 24, plan.estimate.memory.fits ? "#3c8d40" : "#b8b8b8",
                      "#" + std::to_string(plan.rank) + ": MFU " + value);
    body += svg::text(x_mfu + wm + 4, y + kRowHeight / 2 + 5, value, "start", 12, "fill=\"#111\"") +
            "\n";
    y += kRowHeight;
  }
  body += svg::close();
  return chart::figure("throughput", "Throughput and MFU",
                       "Predicted training throughput per GPU and model FLOPs utilization (model "
                       "FLOPs without recomputation over the GPU's dense peak at the job's "
                       "precision). Gray bars: plans that do not fit in memory.",
                       body,
                       chart::legend({{"#3566a8", "tokens/s per GPU"},
                                      {"#3c8d40", "MFU"},
                                      {"#b8b8b8", "does not fit in memory"}}));
}

}  // namespace parplan::tools
