// "Why this plan wins": short sentences derived from the numbers of a ReportData. The winner
// is compared with the runner-up and with the job's own plan: the step-time difference, the
// breakdown parts that differ most (with the plan keys behind them) and peak memory.
// Tested in tests/tools/report_test.cpp (sentences name the right parts and keys).
#pragma once

#include <string>
#include <vector>

#include "tools/report/report_data.h"

namespace parplan::tools {

std::vector<std::string> explain_winner(const ReportData& data);

// One sentence comparing plan `a` with plan `b` (a is expected to be the faster one).
std::string compare_plans(const ReportPlan& a, const ReportPlan& b);

// Caveats: plans that do not fit, training methods the cost model does not distinguish.
std::vector<std::string> report_notes(const ReportData& data);

// "#1 search #1": rank and label.
std::string plan_name(const ReportPlan& plan);

}  // namespace parplan::tools
