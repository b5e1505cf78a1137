// Runs the parplan binary for CLI tests: captures stdout, stderr and the exit code.
#pragma once

#include <string>

namespace parplan::test {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `args` is appended to the binary path and run through /bin/sh.
CommandResult run_parplan(const std::string& args);

}  // namespace parplan::test
