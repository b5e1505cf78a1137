// Step time against peak memory, one point per plan, with the Pareto front of the plans that
// fit (no other fitting plan is both faster and smaller) connected, and the GPU's capacity.
#include <algorithm>
#include <cstdio>

#include "core/units.h"
#include "tools/cli_common.h"
#include "tools/report/charts.h"
#include "tools/report/svg.h"

namespace parplan::tools {

namespace {

struct Box {
  double x0, y0, x1, y1;
};

bool overlaps(const Box& a, const Box& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

}  // namespace

std::string scatter_chart(const ReportData& data) {
  const double height = 440;
  const double left = 80, right = 30, top = 20, bottom = 60;
  const double pw = svg::kWidth - left - right;
  const double ph = height - top - bottom;
  const double cap = capacity_gib(data.base_job);
  double mem_lo = cap, mem_hi = cap, t_lo = 1e300, t_hi = 0;
  for (const auto& p : data.plans) {
    const double m = p.estimate.memory.peak_bytes / kGiB;
    mem_lo = std::min(mem_lo, m);
    mem_hi = std::max(mem_hi, m);
    t_lo = std::min(t_lo, p.estimate.step_time_s);
    t_hi = std::max(t_hi, p.estimate.step_time_s);
  }
  const double mem_pad = std::max(0.05 * (mem_hi - mem_lo), 0.5);
  const auto x_ticks = svg::nice_ticks(std::max(0.0, mem_lo - mem_pad), mem_hi + mem_pad, 6);
  const double t_pad = std::max(0.08 * (t_hi - t_lo), 0.02 * t_hi);
  const auto y_ticks = svg::nice_ticks(std::max(0.0, t_lo - t_pad), t_hi + t_pad, 5);
  const double x_min = std::max(0.0, mem_lo - mem_pad), x_max = mem_hi + mem_pad;
  const double y_min = std::max(0.0, t_lo - t_pad), y_max = t_hi + t_pad;
  auto px = [&](double gib) { return left + pw * (gib - x_min) / (x_max - x_min); };
  auto py = [&](double s) { return top + ph - ph * (s - y_min) / (y_max - y_min); };

  std::string body = svg::open(height, "Step time versus peak memory with the Pareto front");
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  for (double t : x_ticks) {
    body += svg::line(px(t), top, px(t), top + ph, "#e0e0e0", 1);
    body +=
        svg::text(px(t), top + ph + 18, svg::tick_label(t, x_step), "middle", 12, "fill=\"#333\"") +
        "\n";
  }
  for (double t : y_ticks) {
    body += svg::line(left, py(t), left + pw, py(t), "#e0e0e0", 1);
    body += svg::text(left - 8, py(t) + 4, svg::tick_label(t, y_step), "end", 12, "fill=\"#333\"") +
            "\n";
  }
  body += svg::rect(left, top, pw, ph, "none", {}, "stroke=\"#888\"") + "\n";
  body += svg::text(left + pw / 2, height - 14, "peak memory per GPU, GiB", "middle", 13,
                    "fill=\"#111\"");
  body += svg::text(18, top + ph / 2, "step time, s", "middle", 13,
                    "fill=\"#111\" transform=\"rotate(-90 18 " + svg::num(top + ph / 2) + ")\"") +
          "\n";
  if (cap >= x_min && cap <= x_max) {
    body += svg::line(px(cap), top, px(cap), top + ph, "#b00020", 2, "stroke-dasharray=\"6 4\"");
    char text[64];
    std::snprintf(text, sizeof text, "capacity %.1f GiB", cap);
    body += svg::text(px(cap) - 6, top + 14, text, "end", 12, "fill=\"#b00020\"") + "\n";
  }
  // The front as a connected line, by increasing memory.
  if (data.pareto.size() > 1) {
    std::string points;
    for (std::size_t i : data.pareto) {
      const auto& e = data.plans[i].estimate;
      points += svg::num(px(e.memory.peak_bytes / kGiB)) + "," + svg::num(py(e.step_time_s)) + " ";
    }
    body += "<polyline points=\"" + points +
            "\" fill=\"none\" stroke=\"#e07b00\" stroke-width=\"2.5\"/>\n";
  }
  std::vector<Box> taken;
  std::vector<std::pair<double, double>> centers;
  for (std::size_t i : data.by_rank) {
    const ReportPlan& plan = data.plans[i];
    const auto& e = plan.estimate;
    const double x = px(e.memory.peak_bytes / kGiB), y = py(e.step_time_s);
    centers.emplace_back(x, y);
    taken.push_back({x - 8, y - 8, x + 8, y + 8});
    char tip[256];
    std::snprintf(tip, sizeof tip, "#%d %s (%s): %s per step, %.1f GiB%s", plan.rank,
                  plan.label.c_str(), plan_summary(plan.job.plan).c_str(),
                  human_seconds(e.step_time_s).c_str(), e.memory.peak_bytes / kGiB,
                  e.memory.fits ? "" : ", does not fit");
    if (!e.memory.fits) {
      body += "<g><title>" + svg::escape(tip) + "</title>" +
              svg::line(x - 6, y - 6, x + 6, y + 6, "#b00020", 2.5) +
              svg::line(x - 6, y + 6, x + 6, y - 6, "#b00020", 2.5) + "</g>\n";
    } else {
      const char* fill = plan.on_pareto_front ? "#e07b00" : "#ffffff";
      body += "<circle cx=\"" + svg::num(x) + "\" cy=\"" + svg::num(y) + "\" r=\"7\" fill=\"" +
              fill + "\" stroke=\"#3566a8\" stroke-width=\"2\"><title>" + svg::escape(tip) +
              "</title></circle>\n";
    }
  }
  // Rank labels beside their points, moved around the point to avoid covering other labels
  // and points; a label that cannot be placed cleanly is left out (the table names it).
  std::size_t k = 0;
  for (std::size_t i : data.by_rank) {
    const auto [x, y] = centers[k++];
    const std::string label = "#" + std::to_string(data.plans[i].rank);
    const double w = 7.5 * label.size() + 2, h = 13;
    struct Spot {
      double dx, dy;  // baseline-left corner relative to the point
    };
    const Spot spots[] = {{10, -6},      {10, 15},     {-10 - w, -6}, {-10 - w, 15},
                          {-w / 2, -12}, {-w / 2, 24}, {14, 4},       {-14 - w, 4}};
    for (const auto& spot : spots) {
      const Box box{x + spot.dx, y + spot.dy - h + 2, x + spot.dx + w, y + spot.dy + 2};
      const bool inside =
          box.x0 >= left && box.x1 <= left + pw && box.y0 >= top && box.y1 <= top + ph;
      const bool clear = std::none_of(taken.begin(), taken.end(),
                                      [&](const Box& other) { return overlaps(box, other); });
      if (inside && clear) {
        body += svg::text(box.x0 + 1, y + spot.dy, label, "start", 12,
                          "fill=\"#111\" font-weight=\"600\"") +
                "\n";
        taken.push_back(box);
        break;
      }
    }
  }
  body += svg::close();
  return chart::figure(
      "scatter", "Step time vs peak memory",
      "Each point is a compared plan (label: its rank, where there is room; hover for details). "
      "Filled points connected by the line form "
      "the Pareto front of the plans that fit: for each, no other fitting plan is both faster "
      "and smaller. Lower and further left is better.",
      body,
      chart::legend({{"#e07b00", "Pareto front (filled, connected)"},
                     {"#ffffff", "other plan that fits (hollow)"},
                     {"#b00020", "does not fit (cross); capacity (dashed)"}}));
}

}  // namespace parplan::tools
