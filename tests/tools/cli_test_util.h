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

// The same under `mpirun -np ranks` (as root and oversubscribed, as the mpi tests run).
CommandResult run_parplan_mpi(int ranks, const std::string& args);

}  // namespace parplan::test
