// The winner's pipeline schedule as a Gantt chart from the simulator's events: one row per
// pipeline stage, forward and backward passes colored (model chunks of interleaved schedules
// in lighter shades), idle time (the bubble) left gray. Long schedules are drawn as two
// windows, the first and the last kActionsPerWindow actions of every stage (warm-up and
// cool-down, where the bubbles are), with the steady state between them omitted.
#include <algorithm>
#include <cstdio>
#include <map>

#include "core/plural.h"
#include "tools/cli_common.h"
#include "tools/report/charts.h"
#include "tools/report/svg.h"

namespace parplan::tools {

namespace {

constexpr std::size_t kActionsPerWindow = 16;
constexpr std::size_t kWholeStepMaxActions = 2 * kActionsPerWindow + 8;

std::string_view op_color(PipeOp op, int64_t chunk) {
  static const char* forward[] = {"#1f4e8c", "#3f73b8", "#6d9bd6", "#a4c2ea"};
  static const char* backward[] = {"#b35300", "#e07b00", "#f0a04b", "#f7c68f"};
  const auto shade = static_cast<std::size_t>(chunk) % 4;
  switch (op) {
    case PipeOp::Forward:
      return forward[shade];
    case PipeOp::Backward:
    case PipeOp::BackwardInput:
      return backward[shade];
    case PipeOp::BackwardWeight:
      return "#8b5fa8";
  }
  return "#555555";
}

const char* op_name(PipeOp op) {
  switch (op) {
    case PipeOp::Forward:
      return "forward";
    case PipeOp::Backward:
      return "backward";
    case PipeOp::BackwardInput:
      return "backward (input grad)";
    case PipeOp::BackwardWeight:
      return "backward (weight grad)";
  }
  return "?";
}

struct Window {
  double start_s, end_s;
};

}  // namespace

std::string timeline_chart(const ReportData& data) {
  const ReportPlan& plan = data.winner();
  const cost::PipelineResult& pipe = data.winner_detail.pipeline;
  std::map<int64_t, std::vector<const cost::PipelineEvent*>> by_stage;
  for (const auto& e : pipe.events) by_stage[e.stage].push_back(&e);
  for (auto& [stage, list] : by_stage) {
    std::sort(list.begin(), list.end(),
              [](const auto* a, const auto* b) { return a->start_s < b->start_s; });
  }
  const int64_t stages = plan.job.plan.pp;
  std::size_t per_stage = 0;
  for (const auto& [stage, list] : by_stage) per_stage = std::max(per_stage, list.size());

  // One window for short schedules, else the first and last actions of every stage.
  std::vector<Window> windows;
  double first_end = 0, last_start = pipe.makespan_s;
  if (per_stage > kWholeStepMaxActions) {
    for (const auto& [stage, list] : by_stage) {
      if (list.size() < kActionsPerWindow) continue;
      first_end = std::max(first_end, list[std::min(kActionsPerWindow, list.size()) - 1]->end_s);
      last_start = std::min(last_start, list[list.size() - kActionsPerWindow]->start_s);
    }
  }
  const bool split = per_stage > kWholeStepMaxActions && first_end < last_start;
  if (split) {
    windows = {{0, first_end}, {last_start, pipe.makespan_s}};
  } else {
    windows = {{0, pipe.makespan_s}};
  }

  const double left = 90, right = 20, top = 10, axis = 44;
  const double row = std::clamp(360.0 / std::max<int64_t>(1, stages), 12.0, 30.0);
  const double height = top + stages * row + axis;
  const double gap = split ? 36 : 0;
  const double panel = (svg::kWidth - left - right - gap) / windows.size();
  std::string body = svg::open(height, "Pipeline timeline of the best plan");
  for (int64_t s = 0; s < stages; ++s) {
    body += svg::text(left - 8, top + s * row + row / 2 + 4, "stage " + std::to_string(s), "end",
                      std::min(12.0, row - 1), "fill=\"#111\"");
  }
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const Window win = windows[w];
    const double x0 = left + w * (panel + gap);
    const double span = std::max(win.end_s - win.start_s, 1e-12);
    auto px = [&](double t) {
      return x0 + panel * (std::clamp(t, win.start_s, win.end_s) - win.start_s) / span;
    };
    body += svg::rect(x0, top, panel, stages * row, "#e4e4e4") + "\n";
    for (const auto& [stage, list] : by_stage) {
      for (const auto* e : list) {
        if (e->end_s <= win.start_s || e->start_s >= win.end_s) continue;
        const double x = px(e->start_s), wdt = px(e->end_s) - x;
        const double y = top + stage * row + 1;
        const std::string_view fill = op_color(e->op, e->chunk);
        char tip[200];
        std::snprintf(tip, sizeof tip, "stage %lld, %s of micro-batch %lld, chunk %lld: %s to %s",
                      static_cast<long long>(stage), op_name(e->op),
                      static_cast<long long>(e->micro_batch), static_cast<long long>(e->chunk),
                      human_seconds(e->start_s).c_str(), human_seconds(e->end_s).c_str());
        body += svg::rect(x, y, std::max(wdt - 0.6, 0.4), row - 2, fill, tip,
                          "stroke=\"#fff\" stroke-width=\"0.4\"");
        const std::string number = std::to_string(e->micro_batch);
        if (wdt >= 6.0 * number.size() + 4 && row >= 14) {
          body +=
              svg::text(x + wdt / 2, y + row / 2 + 2.5, number, "middle", std::min(10.0, row - 5),
                        "fill=\"" + std::string(svg::text_color_on(fill)) + "\"");
        }
      }
      body += "\n";
    }
    const auto ticks = svg::nice_ticks(win.start_s, win.end_s, split ? 4 : 8);
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : span;
    for (double t : ticks) {
      if (t < win.start_s - 1e-12 || t > win.end_s + 1e-12) continue;
      body += svg::line(px(t), top + stages * row, px(t), top + stages * row + 5, "#333", 1);
      body += svg::text(px(t), top + stages * row + 18, svg::tick_label(t, step), "middle", 11,
                        "fill=\"#333\"");
    }
    body += svg::text(x0 + panel / 2, height - 8,
                      split ? (w == 0 ? "start of the step (s)" : "end of the step (s)")
                            : "time in the step (s)",
                      "middle", 12, "fill=\"#111\"") +
            "\n";
  }
  if (split) {
    const double xm = left + panel + gap / 2;
    body += svg::text(xm, top + stages * row / 2 + 4, "…", "middle", 20, "fill=\"#444\"");
  }
  body += svg::close();

  const std::string drawn =
      split
          ? "Too long to draw whole: the first and the last " + std::to_string(kActionsPerWindow) +
                " actions of every stage are shown, the steady state between them is omitted."
          : std::string("The whole step is drawn.");
  char caption[640];
  const double pipeline_share =
      plan.estimate.step_time_s > 0 ? pipe.makespan_s / plan.estimate.step_time_s : 0;
  std::snprintf(
      caption, sizeof caption,
      "Simulated schedule of the best plan, #1 %s (%s, %s schedule, %s, %zu "
      "actions per stage). %s Pipeline part: %s of the %s step (%.0f%%); gradient reduction "
      "and the optimizer follow. Numbers in boxes are micro-batch indices; gray is idle time.",
      plan.label.c_str(), plan_summary(plan.job.plan).c_str(), to_string(plan.job.plan.schedule),
      count_of(plan.estimate.num_micro_batches, "micro-batch").c_str(), per_stage, drawn.c_str(),
      human_seconds(pipe.makespan_s).c_str(), human_seconds(plan.estimate.step_time_s).c_str(),
      100 * pipeline_share);
  std::vector<std::pair<std::string, std::string>> legend = {
      {"#1f4e8c", "forward"}, {"#b35300", "backward"}, {"#e4e4e4", "idle (bubble)"}};
  if (plan.job.plan.vpp > 1) {
    legend.insert(legend.begin() + 2, {"#6d9bd6", "later model chunks: lighter shades"});
  }
  if (plan.job.plan.schedule == ScheduleKind::ZeroBubble) {
    legend.insert(legend.begin() + 2, {"#8b5fa8", "deferred weight gradient"});
  }
  return chart::figure("timeline", "Pipeline timeline of the best plan", caption, body,
                       chart::legend(legend));
}

}  // namespace parplan::tools
