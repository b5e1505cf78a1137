// The bad-input corpus (tests/bad_inputs/cases.json): every case runs the parplan binary on a
// broken input and must fail cleanly: the expected exit code (1 input, 2 usage) within the
// time limit, nothing on stdout, one message on stderr starting with "error: " that contains
// every expected string (the file and the key path), and no crash, uncaught exception or
// sanitizer report. One GoogleTest case per corpus case, so ctest lists and runs them apart.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kCorpus = std::string(PARPLAN_SOURCE_DIR) + "/tests/bad_inputs";

// Each case must finish within this many seconds (PARPLAN_BAD_INPUT_TIMEOUT_S overrides it for
// much slower tools such as valgrind).
double time_limit_s() {
  if (const char* text = std::getenv("PARPLAN_BAD_INPUT_TIMEOUT_S")) return std::atof(text);
  return 2.0;
}

struct Case {
  std::string name;
  std::string note;
  std::vector<std::string> args;
  int exit_code = 1;
  std::vector<std::string> expect;
};

std::vector<Case> load_cases() {
  std::ifstream in(kCorpus + "/cases.json");
  if (!in) return {};
  const Json manifest = Json::parse(in);
  std::vector<Case> cases;
  for (const Json& c : manifest.at("cases")) {
    Case out;
    out.name = c.at("name").get<std::string>();
    out.note = c.value("note", "");
    out.args = c.at("args").get<std::vector<std::string>>();
    out.exit_code = c.at("exit").get<int>();
    out.expect = c.at("expect").get<std::vector<std::string>>();
    cases.push_back(std::move(out));
  }
  return cases;
}

// GoogleTest prints the parameter of a failing case: its name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = load_cases();
  return cases;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Outcome {
  bool exited = false;     // exited normally (no signal, no timeout)
  bool timed_out = false;  // killed after the time limit
  int exit_code = -1;
  int signal = 0;
  double seconds = 0;
  std::string out;
  std::string err;
};

// Runs parplan with `args` (no shell: arguments pass through unchanged), stdout and stderr to
// files; kills it with SIGKILL at the deadline.
Outcome run_parplan(const std::vector<std::string>& args, const std::string& scratch) {
  const std::string out_path = scratch + "/stdout.txt";
  const std::string err_path = scratch + "/stderr.txt";
  std::vector<std::string> argv_text{PARPLAN_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0 || err_fd < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(125);
    if (chdir(scratch.c_str()) != 0) _exit(125);
    // A sanitizer report exits with its own code, never with the 1 an input error gives.
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string asan_options = std::string(asan ? asan : "") + ":exitcode=86";
    setenv("ASAN_OPTIONS", asan_options.c_str(), 1);
    setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:exitcode=87", 1);
    execv(argv[0], argv.data());
    _exit(126);
  }
  Outcome outcome;
  if (pid < 0) return outcome;
  const auto deadline = start + std::chrono::duration<double>(time_limit_s());
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      outcome.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!outcome.timed_out && WIFEXITED(status)) {
    outcome.exited = true;
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  outcome.out = slurp(out_path);
  outcome.err = slurp(err_path);
  return outcome;
}

class BadInput : public testing::TestWithParam<Case> {};

TEST_P(BadInput, FailsCleanly) {
  const Case& c = GetParam();
  const std::string case_dir = kCorpus + "/" + c.name;
  std::vector<std::string> args;
  for (const auto& arg : c.args) {
    args.push_back(replace_all(replace_all(arg, "{case}", case_dir), "{dir}", kCorpus));
  }
  const std::string scratch = testing::TempDir() + "/bad_input_" + c.name;
  fs::create_directories(scratch);
  const Outcome r = run_parplan(args, scratch);
  fs::remove_all(scratch);

  SCOPED_TRACE(c.name + " (" + c.note + ")\nstderr: " + r.err);
  ASSERT_FALSE(r.timed_out) << "no result within " << time_limit_s() << " s";
  ASSERT_TRUE(r.exited) << "killed by signal " << r.signal;
  EXPECT_EQ(r.exit_code, c.exit_code);
  EXPECT_LE(r.seconds, time_limit_s());
  EXPECT_EQ(r.out, "") << "stdout must stay empty on an error";
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << "stderr must start with \"error: \"";
  for (const auto& expected : c.expect) {
    EXPECT_NE(r.err.find(expected), std::string::npos) << "stderr lacks \"" << expected << "\"";
  }
  for (const char* crash : {"terminate called", "Sanitizer", "runtime error:", "internal error",
                            "Assertion", "Segmentation", "Aborted", "[json.exception.type_error"}) {
    EXPECT_EQ(r.err.find(crash), std::string::npos) << "stderr shows a crash: " << crash;
  }
}

std::string test_name(const testing::TestParamInfo<Case>& info) {
  std::string name = info.param.name;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, testing::ValuesIn(all_cases()), test_name);

// The manifest and the folders agree: enough cases, unique names, every folder used.
TEST(BadInputCorpus, ManifestMatchesFolders) {
  const auto& cases = all_cases();
  EXPECT_GE(cases.size(), 60u);
  std::set<std::string> names;
  for (const auto& c : cases) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
    EXPECT_FALSE(c.expect.empty()) << c.name << " expects nothing";
    EXPECT_TRUE(c.exit_code == 1 || c.exit_code == 2) << c.name;
    bool uses_folder = false;
    for (const auto& arg : c.args) uses_folder |= arg.find("{case}") != std::string::npos;
    if (uses_folder) {
      EXPECT_TRUE(fs::is_directory(kCorpus + "/" + c.name)) << c.name << " has no folder";
    }
  }
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    if (!entry.is_directory()) continue;
    const std::string folder = entry.path().filename().string();
    EXPECT_TRUE(names.count(folder)) << "folder " << folder << " is in no case of cases.json";
  }
}

}  // namespace
