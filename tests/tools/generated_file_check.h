// The staleness check of a generated, committed file (docs/development.md "Generated and
// golden files"): run its tools/ script with the built binary into a temporary file and fail
// when the committed file differs, naming the first differing line and how to regenerate it.
// The script's own failures fail the check too. Used by validation_report_test.cpp and
// error_model_file_test.cpp.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace parplan::testing_support {

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// `script` (under tools/) writes `committed` (relative to the repository) with --parplan and
// --out; `fix` says how to regenerate the file when it is stale.
inline void expect_generated_file_up_to_date(const std::string& script,
                                             const std::string& committed, const std::string& fix) {
  const std::string source = PARPLAN_SOURCE_DIR;
  const std::string name = committed.substr(committed.rfind('/') + 1);
  const std::string fresh = testing::TempDir() + "/" + name;
  const std::string log = testing::TempDir() + "/" + script + ".log";
  const std::string command = "bash " + source + "/tools/" + script + " --parplan " +
                              PARPLAN_BINARY + " --out " + fresh + " >" + log + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\nfailed:\n"
                                                             << read_text(log);

  const auto want = read_lines(fresh);
  const auto have = read_lines(source + "/" + committed);
  ASSERT_FALSE(want.empty()) << "the script wrote nothing to " << fresh;
  for (std::size_t i = 0; i < std::max(want.size(), have.size()); ++i) {
    const std::string now = i < want.size() ? want[i] : "(end of file)";
    const std::string before = i < have.size() ? have[i] : "(end of file)";
    ASSERT_EQ(before, now) << fix << "\nFirst difference at line " << i + 1
                           << ": the committed file has the first, the binary now writes the "
                              "second.";
  }
}

}  // namespace parplan::testing_support
