// libFuzzer target: arbitrary bytes as `parplan plan --fix` values (one per line) through
// planner::parse_fixes. Built with PARPLAN_ENABLE_FUZZERS; run by tools/fuzz.sh.
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "planner/plan_space.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parplan;
  std::vector<std::string> fixes;
  std::string line;
  for (char c : fuzz::as_text(data, size)) {
    if (c == '\n') {
      fixes.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  fixes.push_back(line);
  fuzz::expect_clean([&] {
    const planner::PlanFixes f = planner::parse_fixes(fixes);
    PARPLAN_ASSERT(!f.tp || (*f.tp >= 1 && *f.tp <= 1'000'000));
    PARPLAN_ASSERT(!f.vpp || (*f.vpp >= 1 && *f.vpp <= 1024));
  });
  return 0;
}
