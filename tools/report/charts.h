// The report's charts, each an HTML <figure> with an inline SVG drawn here (no scripts) and
// an HTML legend: the step-time breakdown per plan (stacked bars), memory per pipeline stage
// against the GPU's capacity, throughput and MFU, step time vs peak memory with the Pareto
// front, and the winner's pipeline timeline (Gantt). Plans appear best first.
// Tested by tests/tools/report_html_test.cpp (headless Chromium: rendered, SVGs counted).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/report/report_data.h"

namespace parplan::tools {

std::string breakdown_chart(const ReportData& data);
std::string memory_chart(const ReportData& data);
std::string throughput_chart(const ReportData& data);
std::string scatter_chart(const ReportData& data);
std::string timeline_chart(const ReportData& data);

// Number of <svg> elements the page carries (one per chart above).
inline constexpr int kNumCharts = 5;

namespace chart {

// Colors of the breakdown parts (StepBreakdown::named() order), readable on white.
std::string_view part_color(std::string_view part);

// An HTML legend: colored swatches with names.
std::string legend(const std::vector<std::pair<std::string, std::string>>& color_and_name);

// Left column of horizontal-bar charts: "#rank label" and the plan summary below it.
inline constexpr double kLabelWidth = 250;
std::string plan_label(const ReportPlan& plan, double y_center);

// <figure> with a heading, an explanatory caption, the SVG and a legend.
std::string figure(std::string_view id, std::string_view title, std::string_view caption,
                   const std::string& svg, const std::string& legend_html);

}  // namespace chart

}  // namespace parplan::tools
