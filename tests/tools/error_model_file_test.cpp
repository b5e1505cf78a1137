// planner/data/error_model.json is generated (tools/error_model.sh from `parplan validate
// --write-error-model`): this test runs the script with the built binary into a temporary file
// and fails when the committed file differs, naming the first differing line and the command
// that regenerates it (docs/intervals.md).
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

TEST(ErrorModelFile, IsUpToDate) {
  const std::string source = PARPLAN_SOURCE_DIR;
  const std::string committed = source + "/planner/data/error_model.json";
  const std::string fresh = testing::TempDir() + "/error_model.json";
  const std::string log = testing::TempDir() + "/error_model.log";
  const std::string command = "bash " + source + "/tools/error_model.sh --parplan " +
                              PARPLAN_BINARY + " --out " + fresh + " >" + log + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\nfailed:\n"
                                                             << read_text(log);

  const auto want = read_lines(fresh);
  const auto have = read_lines(committed);
  const std::string fix =
      "planner/data/error_model.json is stale; regenerate it with `tools/error_model.sh` "
      "(from the repository root, after building build/tools/parplan), rebuild (the binary "
      "embeds it) and commit it.";
  ASSERT_FALSE(want.empty()) << "the script wrote nothing to " << fresh;
  for (std::size_t i = 0; i < std::max(want.size(), have.size()); ++i) {
    const std::string now = i < want.size() ? want[i] : "(end of file)";
    const std::string before = i < have.size() ? have[i] : "(end of file)";
    ASSERT_EQ(before, now) << fix << "\nFirst difference at line " << i + 1
                           << ": the committed file has the first, the binary now writes the "
                              "second.";
  }
}

}  // namespace
}  // namespace parplan
