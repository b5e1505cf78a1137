// Golden files for report.md, report.csv and report.json of the fixed comparison in
// tests/data/report (five plans). Numbers may differ within golden.h's tolerance; text must
// match. Regenerate after an intended change: PARPLAN_UPDATE_GOLDENS=1 ctest -R ReportGolden
// then review `git diff tests/data/golden/report`.
#include <gtest/gtest.h>

#include "core/atomic_file.h"
#include "tests/tools/golden.h"
#include "tests/tools/test_support.h"
#include "tools/report/report_writers.h"

namespace parplan::testing {
namespace {

std::string golden_path(const std::string& name) {
  return std::string(PARPLAN_TEST_DATA) + "/golden/report/" + name;
}

// Compares `actual` with the golden file, or rewrites the file when asked to.
void check_golden(const std::string& name, const std::string& actual, bool is_json) {
  const std::string path = golden_path(name);
  if (update_goldens_requested()) {
    write_file_atomically(path, actual);
    GTEST_SKIP() << "rewrote " << path << " (PARPLAN_UPDATE_GOLDENS=1); review the git diff";
  }
  const std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing; create it with PARPLAN_UPDATE_GOLDENS=1";
  const std::string diff = is_json ? compare_json(Json::parse(expected), Json::parse(actual))
                                   : compare_text(expected, actual);
  EXPECT_EQ(diff, "") << name << " differs from " << path
                      << ". If the change is intended, regenerate with "
                         "PARPLAN_UPDATE_GOLDENS=1 and review the diff.";
}

TEST(ReportGolden, Markdown) {
  check_golden("report.md", tools::report_to_markdown(fixed_report()), false);
}

TEST(ReportGolden, Csv) { check_golden("report.csv", tools::report_to_csv(fixed_report()), false); }

TEST(ReportGolden, Json) {
  check_golden("report.json", tools::report_to_json(fixed_report()).dump(2) + "\n", true);
}

TEST(GoldenCompare, ToleratesSmallNumericDifferencesOnly) {
  EXPECT_EQ(compare_text("step 1.2345 s", "step 1.2345 s"), "");
  EXPECT_EQ(compare_text("step 1.2345 s", "step 1.2346 s"), "");  // last printed digit
  EXPECT_NE(compare_text("step 1.2345 s", "step 1.2355 s"), "");
  EXPECT_NE(compare_text("step 1.2345 s", "step 1.2345 ms"), "");
  EXPECT_NE(compare_text("a 1 b", "a 1 b 2"), "");
  EXPECT_EQ(compare_text("x 1.00000000e+10", "x 1.000000001e+10"), "");
  EXPECT_NE(compare_text("x 1e+10", "x 1.1e+10"), "");
  EXPECT_EQ(compare_json(Json::parse(R"({"a": 1.0, "b": "t 2.50"})"),
                         Json::parse(R"({"a": 1.0000000001, "b": "t 2.50"})")),
            "");
  EXPECT_NE(compare_json(Json::parse(R"({"a": 1.0})"), Json::parse(R"({"a": 1.001})")), "");
  EXPECT_NE(compare_json(Json::parse(R"({"a": 1})"), Json::parse(R"({"a": 1, "b": 2})")), "");
  EXPECT_NE(compare_json(Json::parse(R"([1, 2])"), Json::parse(R"([1])")), "");
}

}  // namespace
}  // namespace parplan::testing
