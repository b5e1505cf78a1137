// report.html in headless Chromium (Debian package `chromium`, installed by tools/deps.sh):
// the page loads, a screenshot is taken, the DOM dump holds every chart's <svg>, and the
// browser log has no console error. The page has no script at all, so console errors would
// mean a broken page or a blocked resource. Skipped, with a message, only when chromium is
// not installed. The screenshots stay in the build folder (report_screenshot*.png).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/atomic_file.h"
#include "tests/tools/test_support.h"
#include "tools/report/charts.h"
#include "tools/report/plan_sources.h"
#include "tools/report/report_writers.h"

namespace parplan::testing {
namespace {

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const CommandResult r = run_command(std::string("command -v ") + name);
    if (r.exit_code == 0 && !r.output.empty()) return r.output.substr(0, r.output.find('\n'));
  }
  return "";
}

struct Rendered {
  CommandResult screenshot, dom;
  std::string png;
};

// Renders `html_path` twice (screenshot, DOM dump) with a fresh profile each time.
Rendered render(const std::string& chromium, const std::string& html_path,
                const std::string& png_path) {
  TempDir profile_a, profile_b;
  const std::string common =
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --enable-logging=stderr --v=0 --window-size=1400,2400";
  Rendered out;
  out.screenshot = run_command("timeout 120 '" + chromium + "'" + common + " --user-data-dir='" +
                               profile_a.path() + "' --screenshot='" + png_path + "' 'file://" +
                               html_path + "'");
  out.dom = run_command("timeout 120 '" + chromium + "'" + common + " --user-data-dir='" +
                        profile_b.path() + "' --dump-dom 'file://" + html_path + "'");
  out.png = read_file(png_path);
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

void check_rendered(const Rendered& r) {
  EXPECT_EQ(r.screenshot.exit_code, 0) << r.screenshot.output;
  EXPECT_EQ(r.dom.exit_code, 0) << r.dom.output;
  ASSERT_GT(r.png.size(), 10000u) << "screenshot missing or blank";
  EXPECT_EQ(r.png.substr(1, 3), "PNG");
  // Every chart rendered into the DOM, the page structure intact.
  EXPECT_GE(count(r.dom.output, "<svg"), static_cast<std::size_t>(tools::kNumCharts));
  EXPECT_NE(r.dom.output.find("Where the step time goes"), std::string::npos);
  EXPECT_NE(r.dom.output.find("</html>"), std::string::npos);
  for (const auto* log : {&r.screenshot.output, &r.dom.output}) {
    EXPECT_EQ(log->find("Uncaught"), std::string::npos) << *log;
    EXPECT_EQ(log->find("ERROR:CONSOLE"), std::string::npos) << *log;
    EXPECT_EQ(log->find(":CONSOLE("), std::string::npos) << *log;
    EXPECT_EQ(log->find("net::ERR_"), std::string::npos) << *log;
  }
}

class ReportHtml : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    if (chromium_.empty()) {
      GTEST_SKIP() << "chromium is not installed (Debian package `chromium`; tools/deps.sh "
                      "installs it): the HTML report cannot be rendered here";
    }
  }
  std::string chromium_;
};

TEST_F(ReportHtml, FixedComparisonRendersWithEveryChart) {
  TempDir dir;
  const tools::ReportFiles files = tools::write_report(dir.path(), fixed_report(), {});
  const std::string png = std::filesystem::current_path().string() + "/report_screenshot.png";
  check_rendered(render(chromium_, files.html, png));
}

// A deep interleaved pipeline (GPT-3 175B, pp 12, 384 micro-batches): the timeline is drawn
// as two windows; the page must still render every chart.
TEST_F(ReportHtml, LongInterleavedPipelineRenders) {
  const Job job = tools::load_job_for_comparison(std::string(PARPLAN_SOURCE_DIR) +
                                                 "/tools/examples/gpt3-175b-dgx-a100.json");
  tools::PlanSources sources;
  sources.plan_files = {report_data("gpt3_vpp2.json")};
  TempDir dir;
  const auto data = tools::build_report(job, tools::collect_plans(job, sources));
  const tools::ReportFiles files = tools::write_report(dir.path(), data, {});
  EXPECT_NE(read_file(files.html).find("steady state between them is omitted"), std::string::npos);
  const std::string png =
      std::filesystem::current_path().string() + "/report_screenshot_pipeline.png";
  check_rendered(render(chromium_, files.html, png));
}

}  // namespace
}  // namespace parplan::testing
