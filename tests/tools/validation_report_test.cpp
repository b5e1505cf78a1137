// docs/validation_results.md is generated (tools/validation_report.sh from `parplan validate
// --published`): this test runs the script with the built binary into a temporary file and
// fails when the committed page differs, naming the first differing line and the command that
// regenerates the page. The script's own failures (a data file validate rejects, a text table
// it cannot read) fail the test too.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace parplan {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(ValidationReport, IsUpToDate) {
  const std::string source = PARPLAN_SOURCE_DIR;
  const std::string committed = source + "/docs/validation_results.md";
  const std::string fresh = testing::TempDir() + "/validation_results.md";
  const std::string log = testing::TempDir() + "/validation_report.log";
  const std::string command = "bash " + source + "/tools/validation_report.sh --parplan " +
                              PARPLAN_BINARY + " --out " + fresh + " >" + log + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\nfailed:\n"
                                                             << read_text(log);

  const auto want = read_lines(fresh);
  const auto have = read_lines(committed);
  const std::string fix =
      "docs/validation_results.md is stale; regenerate it with `tools/validation_report.sh` "
      "(from the repository root, after building build/tools/parplan) and commit it.";
  ASSERT_FALSE(want.empty()) << "the script wrote nothing to " << fresh;
  for (std::size_t i = 0; i < std::max(want.size(), have.size()); ++i) {
    const std::string now = i < want.size() ? want[i] : "(end of file)";
    const std::string before = i < have.size() ? have[i] : "(end of file)";
    ASSERT_EQ(before, now) << fix << "\nFirst difference at line " << i + 1
                           << ": the committed page has the first, the binary now prints the "
                              "second.";
  }
}

}  // namespace
}  // namespace parplan
