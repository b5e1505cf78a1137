#include "tests/tools/test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tools/report/plan_sources.h"

namespace parplan::testing {

namespace fs = std::filesystem;

CommandResult run_command(const std::string& command) {
  TempDir dir;
  const std::string out = dir.file("output.txt");
  const int status = std::system((command + " > '" + out + "' 2>&1").c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.output = read_file(out);
  return result;
}

CommandResult run_parplan(const std::string& args) {
  return run_command(std::string("'") + PARPLAN_BINARY + "' " + args);
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "parplan_test_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(path)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string report_data(const std::string& name) {
  return std::string(PARPLAN_TEST_DATA) + "/report/" + name;
}

tools::ReportData fixed_report() {
  const Job job = tools::load_job_for_comparison(report_data("job.json"));
  tools::PlanSources sources;
  sources.plan_files = {report_data("plan_vpp.json"), report_data("plan_zero3.json"),
                        report_data("plan_no_fit.json"), report_data("job_zero_bubble.json")};
  return tools::build_report(job, tools::collect_plans(job, sources));
}

}  // namespace parplan::testing
