// Why `parplan plan` found no plan, and what would change that: a --fix that leaves no valid
// plan is an input error naming it (exit 1); otherwise the least memory any plan needs per
// GPU, the plan that came closest, the fewest nodes of the job's node type on which a plan
// fits, and, when no plan is valid at all, the factor of the GPU count that blocks them
// (planner/dead_end.h). `plan` then exits with kNoPlanFitsExit. Tested in
// tests/tools/plan_cli_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/job.h"
#include "core/json_input.h"
#include "planner/search.h"

namespace parplan::tools {

// `plan`'s exit code when the search ends without a plan that fits (docs/commands.md).
inline constexpr int kNoPlanFitsExit = 3;

struct DeadEnd {
  std::string text;  // lines for the human output, each ending in '\n'
  Json json;         // the "no_plan" object of `plan --json`
};

// For a search whose top is empty. Throws InputError naming --fix (`fixes`, as given) when
// the plan space without the pins has valid plans and with them has none.
DeadEnd explain_dead_end(const Job& job, const std::vector<std::string>& fixes,
                         const planner::SearchOptions& options, const planner::SearchResult& r);

}  // namespace parplan::tools
