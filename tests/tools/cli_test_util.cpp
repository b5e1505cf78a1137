#include "cli_test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace parplan::test {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}
}  // namespace

namespace {
// Atomic: tests may run commands from several threads (calibrate_loo_test does).
std::atomic<int> counter{0};
CommandResult run_command(const std::string& prefix, const std::string& args);
}  // namespace

CommandResult run_parplan(const std::string& args) { return run_command("", args); }

CommandResult run_parplan_mpi(int ranks, const std::string& args) {
  return run_command("mpirun --allow-run-as-root --oversubscribe -x " + kMpiRankAsanOptions +
                         " -np " + std::to_string(ranks) + " ",
                     args);
}

CommandResult run_parplan_with_env(const std::string& env, const std::string& args) {
  return run_command(env + " ", args);
}

namespace {
CommandResult run_command(const std::string& prefix, const std::string& args) {
  const std::string base =
      testing::TempDir() + "/cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string command =
      prefix + std::string(PARPLAN_BINARY) + " " + args + " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = slurp(base + ".out");
  result.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return result;
}
}  // namespace

}  // namespace parplan::test
