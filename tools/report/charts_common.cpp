#include <map>

#include "tools/report/charts.h"
#include "tools/report/svg.h"

namespace parplan::tools::chart {

std::string_view part_color(std::string_view part) {
  static const std::map<std::string_view, std::string_view> colors = {
      {"compute", "#3566a8"},
      {"recompute", "#8fb8e0"},
      {"tp_comm", "#e07b00"},
      {"cp_comm", "#f2b56b"},
      {"ep_comm", "#c8423a"},
      {"pipeline_bubble", "#9a9a9a"},
      {"dp_comm", "#3c8d40"},
      {"fsdp_comm", "#98cf8e"},
      {"optimizer", "#8b5fa8"},
      {"step_overhead", "#6b4c2a"},
      {"micro_batch_overhead", "#b08a5a"},
  };
  auto it = colors.find(part);
  return it == colors.end() ? "#555555" : it->second;
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = "<ul class=\"legend\">";
  for (const auto& [color, name] : items) {
    out += "<li><span class=\"swatch\" style=\"background:" + color + "\"></span>" +
           svg::escape(name) + "</li>";
  }
  return out + "</ul>\n";
}

std::string plan_label(const ReportPlan& plan, double y_center) {
  const std::string name = "#" + std::to_string(plan.rank) + " " + plan.label;
  std::string out = svg::text(8, y_center - 3, svg::clip_text(name, 30), "start", 13,
                              "font-weight=\"600\" fill=\"#111\"");
  std::string summary = plan_summary(plan.job.plan);
  if (!plan.estimate.memory.fits) summary += " · no fit";
  out += svg::text(8, y_center + 12, svg::clip_text(summary, 38), "start", 11,
                   plan.estimate.memory.fits ? "fill=\"#444\"" : "fill=\"#b00020\"");
  return out;
}

std::string figure(std::string_view id, std::string_view title, std::string_view caption,
                   const std::string& svg_text, const std::string& legend_html) {
  return "<figure class=\"chart\" id=\"" + svg::escape(id) + "\">\n<h2>" + svg::escape(title) +
         "</h2>\n<figcaption>" + svg::escape(caption) + "</figcaption>\n" + svg_text + legend_html +
         "</figure>\n";
}

}  // namespace parplan::tools::chart
