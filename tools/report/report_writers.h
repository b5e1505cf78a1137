// Renderings of a ReportData: report.json (every number), report.csv (one row per plan,
// units in the header), report.md (tables and the explanation) and report.html (one
// self-contained page with inline SVG charts, no scripts, no network). write_report() writes
// all four atomically into a folder. Golden tests: tests/tools/report_golden_test.cpp; the
// page in headless Chromium: tests/tools/report_html_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/json_input.h"
#include "tools/report/report_data.h"

namespace parplan::tools {

Json report_to_json(const ReportData& data);
// "llama3.1-70b on 8 × dgx-h100 (64 GPUs)" and the training line below it.
std::string report_title(const Job& job);
std::string report_subtitle(const ReportData& data);
std::string report_to_csv(const ReportData& data);
std::string report_to_markdown(const ReportData& data);
std::string report_to_html(const ReportData& data);

struct ReportFiles {
  std::string html, markdown, csv, json;
};

// Throws InputError unless `dir` is a folder or can be created (its parent exists).
void check_report_dir(const std::string& dir);

// Creates `dir` when missing (its parent must exist), refuses to write over any of `inputs`,
// then writes report.{html,md,csv,json}, each atomically.
ReportFiles write_report(const std::string& dir, const ReportData& data,
                         const std::vector<std::string>& inputs);

}  // namespace parplan::tools
