// Helpers for the tools tests: running the parplan binary or another program with its output
// captured, fresh temporary folders, reading files, and the fixed report of
// tests/data/report (the golden and HTML tests use the same inputs).
#pragma once

#include <string>
#include <vector>

#include "tools/report/report_data.h"

namespace parplan::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through /bin/sh; output captured through a temporary file.
CommandResult run_command(const std::string& command);

// `parplan ARGS` (the binary under test, PARPLAN_BINARY).
CommandResult run_parplan(const std::string& args);

// A new empty folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
std::vector<std::string> list_dir(const std::string& path);

// tests/data/report/NAME
std::string report_data(const std::string& name);

// The report of tests/data/report/job.json compared with plan_vpp, plan_zero3, plan_no_fit
// and job_zero_bubble: five plans, one that does not fit, a whole job file as a plan file.
tools::ReportData fixed_report();

}  // namespace parplan::testing
