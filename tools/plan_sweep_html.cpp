// sweep.html (tools/plan_sweep.h): the cluster-size sweep as one self-contained page, inline
// CSS and SVG, no scripts, like report.html. Checked in headless Chromium by
// tests/tools/time_to_train_cli_test.cpp (the file) and by hand (screenshots).
#include <algorithm>
#include <cstdio>
#include <functional>

#include "tools/calibration_text.h"
#include "tools/plan_sweep.h"
#include "tools/report/charts.h"
#include "tools/report/svg.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

const char* kSweepStyle = R"css(
body { margin: 0; background: #fff; color: #111;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 30px 0 6px; }
figure.chart { margin: 30px 0 0; } figcaption { color: #333; font-size: 14px; margin-bottom: 8px; }
svg { display: block; width: 100%; height: auto; }
ul.legend { list-style: none; padding: 0; margin: 6px 0 0; display: flex; gap: 4px 20px; font-size: 14px; }
.swatch { display: inline-block; width: 14px; height: 14px; border: 1px solid #555; vertical-align: -2px; margin-right: 6px; }
pre { font-size: 13px; background: #f6f7f9; padding: 10px; overflow-x: auto; }
)css";

struct Series {
  std::string title, caption, y_label;
  std::function<std::optional<double>(const SweepRow&)> value;
};

// Round ticks from 0 that reach at least `hi` (nice_ticks may stop one step short).
std::vector<double> covering_ticks(double hi, int target) {
  auto ticks = svg::nice_ticks(0, hi > 0 ? hi : 1, target);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : (hi > 0 ? hi : 1);
  if (ticks.empty()) ticks.push_back(0);
  while (ticks.back() < hi) ticks.push_back(ticks.back() + step);
  return ticks;
}

// One line chart of a value against the GPU count, with the knee and the chosen size marked.
std::string line_chart(const SweepResult& sweep, const Series& series, std::string_view id) {
  const double height = 340, left = 90, right = 30, top = 20, bottom = 56;
  const double pw = svg::kWidth - left - right, ph = height - top - bottom;
  std::vector<std::pair<double, double>> points;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    if (const auto v = series.value(sweep.rows[i])) {
      points.emplace_back(static_cast<double>(sweep.rows[i].num_gpus), *v);
      rows.push_back(i);
    }
  }
  if (points.empty()) return "";
  double x_lo = points.front().first, x_hi = x_lo, y_hi = 0;
  for (const auto& [x, y] : points) {
    x_lo = std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
    y_hi = std::max(y_hi, y);
  }
  // Large values in millions, so that tick labels stay short.
  const double scale = y_hi >= 1e6 ? 1e6 : 1.0;
  for (auto& point : points) point.second /= scale;
  y_hi /= scale;
  const std::string y_label = series.y_label + (scale > 1 ? " (millions)" : "");
  const auto x_ticks = covering_ticks(x_hi * 1.03, 8);
  const auto y_ticks = covering_ticks(y_hi * 1.08, 5);
  const double x_max = x_ticks.back(), y_max = y_ticks.back() > 0 ? y_ticks.back() : 1;
  auto px = [&](double x) { return left + pw * x / x_max; };
  auto py = [&](double y) { return top + ph - ph * y / y_max; };
  std::string body = svg::open(height, series.title);
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1;
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1;
  for (double t : x_ticks) {
    body += svg::line(px(t), top, px(t), top + ph, "#e0e0e0") +
            svg::text(px(t), top + ph + 18, svg::tick_label(t, x_step), "middle", 12) + "\n";
  }
  for (double t : y_ticks) {
    body += svg::line(left, py(t), left + pw, py(t), "#e0e0e0") +
            svg::text(left - 8, py(t) + 4, svg::tick_label(t, y_step), "end", 12) + "\n";
  }
  body += svg::rect(left, top, pw, ph, "none", {}, "stroke=\"#888\"") + "\n";
  body += svg::text(left + pw / 2, height - 12, "GPUs", "middle", 13);
  body += svg::text(18, top + ph / 2, y_label, "middle", 13,
                    "transform=\"rotate(-90 18 " + svg::num(top + ph / 2) + ")\"") +
          "\n";
  std::string polyline;
  for (const auto& [x, y] : points) polyline += svg::num(px(x)) + "," + svg::num(py(y)) + " ";
  body += "<polyline points=\"" + polyline +
          "\" fill=\"none\" stroke=\"#3566a8\" stroke-width=\"2.5\"/>\n";
  const auto knee = knee_index(sweep.rows);
  for (std::size_t k = 0; k < points.size(); ++k) {
    const auto [x, y] = points[k];
    const bool is_knee = knee && *knee == rows[k];
    const bool chosen = sweep.chosen && *sweep.chosen == rows[k];
    const char* fill = chosen ? "#2e7d32" : is_knee ? "#e07b00" : "#ffffff";
    char tip[160];
    std::snprintf(tip, sizeof tip, "%.0f GPUs: %.4g%s%s", x, y * scale, is_knee ? " (knee)" : "",
                  chosen ? " (cheapest within the deadline)" : "");
    body += "<circle cx=\"" + svg::num(px(x)) + "\" cy=\"" + svg::num(py(y)) + "\" r=\"" +
            (is_knee || chosen ? "7" : "5") + "\" fill=\"" + fill +
            "\" stroke=\"#3566a8\" stroke-width=\"2\"><title>" + svg::escape(tip) +
            "</title></circle>\n";
  }
  body += svg::close();
  return chart::figure(id, series.title, series.caption, body,
                       chart::legend({{"#e07b00",
                                       "knee: the next size buys less than half its "
                                       "ideal speed-up"},
                                      {"#2e7d32", "cheapest size within the deadline"}}));
}

}  // namespace

std::string sweep_to_html(const Job& job, const SweepResult& sweep,
                          std::optional<double> deadline_days) {
  const bool run = job.training.run.total_tokens.has_value();
  const std::string title = job.model.name + " on " + job.cluster.node.name + " nodes";
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>parplan sweep: " + svg::escape(title) + "</title>\n<style>" +
         std::string(kSweepStyle) + "</style>\n</head>\n<body>\n<main>\n";
  out += "<h1>Cluster sizes: " + svg::escape(title) + "</h1>\n";
  if (!job.calibration.is_identity()) {  // predicted with `--calibration` (core/calibration.h)
    out += "<p>Predicted with a calibration fitted to measured runs on " +
           svg::escape(job.cluster.node.name) + ": " +
           svg::escape(calibration_factors_text(job.calibration)) + ".</p>\n";
  }
  if (run) {
    out += line_chart(sweep,
                      {"Days to train against GPUs",
                       "Best plan at each size; days = tokens / tokens per second / goodput. "
                       "Failures, checkpoints and restarts grow with the cluster.",
                       "days",
                       [](const SweepRow& r) -> std::optional<double> {
                         if (!r.run || !r.run->progresses) return std::nullopt;
                         return r.run->time_to_train_days;
                       }},
                      "days");
    out += line_chart(sweep,
                      {"GPU-hours (cost) against GPUs",
                       "GPU-hours = days x 24 x GPUs: what the run costs at one price per "
                       "GPU-hour; it rises where adding GPUs stops paying.",
                       "GPU-hours",
                       [](const SweepRow& r) -> std::optional<double> {
                         if (!r.run || !r.run->progresses) return std::nullopt;
                         return r.run->gpu_hours;
                       }},
                      "gpu_hours");
  } else {
    out += line_chart(sweep,
                      {"Throughput against GPUs", "Best plan at each size.", "tokens/s",
                       [](const SweepRow& r) -> std::optional<double> {
                         if (!r.best) return std::nullopt;
                         return r.best->estimate.tokens_per_s;
                       }},
                      "throughput");
  }
  out += "<h2>Every size</h2>\n<pre>" + svg::escape(sweep_to_text(job, sweep, deadline_days)) +
         "</pre>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace parplan::tools
