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

// ASAN_OPTIONS for processes that mpirun starts with two or more ranks. Open MPI's PMIx
// progress thread keeps an allocation until exit whose stack runs through component
// libraries unloaded by then, so no suppression can name it; leak checking stays on for
// single-process runs (MPI_Init/Finalize run under core/leak_check_pause.h there).
inline const std::string kMpiRankAsanOptions = "ASAN_OPTIONS=detect_leaks=0";

// The same under `mpirun -np ranks` (as root and oversubscribed, as the mpi tests run).
CommandResult run_parplan_mpi(int ranks, const std::string& args);

// `args` run with `env` (NAME=VALUE ...) in the environment, for commands that start mpirun
// themselves (`validate --run`).
CommandResult run_parplan_with_env(const std::string& env, const std::string& args);

}  // namespace parplan::test
