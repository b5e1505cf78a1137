// `parplan run` end to end under mpirun: the documented JSON keys (docs/commands.md#run), the
// Chrome trace, the errors every rank finds alike (printed once), and failures during a run: a rank
// that throws, a rank killed with SIGKILL and a stalled rank (watchdog) all end every rank with a
// non-zero exit within 30 s and a message naming the rank.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "core/json_input.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Folder {
  Folder() {
    path = fs::temp_directory_path() /
           ("parplan_run_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  fs::path path;
  static inline int counter = 0;
};

std::string write_job(const Folder& f, const std::string& plan, int gpus, int layers = 4,
                      int hidden = 32) {
  const std::string path = f.file("job.json");
  std::ofstream(path) << R"({"model": {"name": "tiny", "num_layers": )" << layers
                      << R"(, "hidden_size": )" << hidden
                      << R"(, "num_attention_heads": 4, "num_query_groups": 2, "vocab_size": 64},
    "cluster": {"node": "dgx-h100", "num_gpus": )"
                      << gpus << R"(},
    "training": {"global_batch_size": 8, "seq_length": 16},
    "plan": )" << plan << "}";
  return path;
}

struct Result {
  int exit_code = -1;
  double seconds = 0;
  std::string out, err;
};

// OpenMPI's own allocations look like leaks to LeakSanitizer (tests/tools/cli_test_util.h,
// kMpiRankAsanOptions), so
// sanitizer builds of parplan run with leak detection off, as the mpi tests do.
std::string mpirun(int np, const std::string& args, const std::string& env_flags = "") {
  return std::string(PARPLAN_MPIEXEC) + " -np " + std::to_string(np) +
         " --oversubscribe --allow-run-as-root -x ASAN_OPTIONS=detect_leaks=0 " + env_flags + " " +
         PARPLAN_BINARY + " run " + args;
}

std::string direct(const std::string& args) {
  return std::string("ASAN_OPTIONS=detect_leaks=0 ") + PARPLAN_BINARY + " run " + args;
}

// Runs a shell command in the background; returns the shell's pid.
pid_t spawn(const std::string& command, const Folder& f) {
  const std::string full = command + " > " + f.file("out") + " 2> " + f.file("err");
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

Result finish(pid_t pid, const Folder& f, Clock::time_point start, double timeout_s = 60) {
  Result r;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::duration<double>(Clock::now() - start).count() > timeout_s) {
      kill(-pid, SIGKILL);  // the test failed; do not leave processes behind
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "command did not finish within " << timeout_s << " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_all(f.file("out"));
  r.err = read_all(f.file("err"));
  return r;
}

Result run(const std::string& command, const Folder& f, double timeout_s = 120) {
  const auto start = Clock::now();
  return finish(spawn(command, f), f, start, timeout_s);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(RunCli, JsonHasTheContractKeys) {
  Folder f;
  const std::string job = write_job(f, R"({"tp": 2, "micro_batch_size": 2})", 2);
  const Result r = run(mpirun(2, "--job " + job + " --steps 3 --json"), f);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json out = parse_json(r.out, "stdout");
  ASSERT_EQ(out["losses"].size(), 3u);
  EXPECT_NEAR(out["losses"][0].get<double>(), std::log(64.0), 0.1);
  EXPECT_GT(out["step_time_s"].get<double>(), 0);
  EXPECT_GT(out["tokens_per_s"].get<double>(), 0);
  EXPECT_GT(out["peak_memory_gib"].get<double>(), 0);
  for (const char* key : {"compute", "recompute", "tp_comm", "pp_comm", "dp_comm",
                          "pipeline_bubble", "optimizer", "other"}) {
    EXPECT_TRUE(out["breakdown"].contains(key)) << key;
  }
  EXPECT_GT(out["breakdown"]["tp_comm"].get<double>(), 0);
  EXPECT_EQ(out["breakdown"]["pp_comm"].get<double>(), 0);
  ASSERT_EQ(out["per_rank"].size(), 2u);
  EXPECT_EQ(out["per_rank"][1]["tp_rank"], 1);
}

TEST(RunCli, TraceHasOneTrackPerStageAndPerCommunicationKind) {
  Folder f;
  const std::string job = write_job(f, R"({"pp": 2, "dp": 2, "zero_stage": 1})", 4);
  const std::string trace = f.file("trace.json");
  const Result r = run(mpirun(4, "--job " + job + " --steps 2 --trace " + trace), f);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pipeline_bubble"), std::string::npos);
  EXPECT_NE(r.out.find("trace written to"), std::string::npos);
  const Json t = load_json_file(trace);
  std::set<std::string> threads, categories, processes;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"]);
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"]);
    if (e["ph"] == "X") {
      categories.insert(e["cat"]);
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  }
  EXPECT_EQ(processes.size(), 4u);
  for (const char* track : {"stage 0", "stage 1", "pp comm", "dp comm"}) {
    EXPECT_TRUE(threads.count(track)) << track;
  }
  for (const char* phase : {"compute", "pp_comm", "dp_comm", "optimizer", "pipeline_bubble"}) {
    EXPECT_TRUE(categories.count(phase)) << phase;
  }
  // The trace must not overwrite the job file.
  const Result clash = run(mpirun(4, "--job " + job + " --steps 1 --trace " + job), f);
  EXPECT_EQ(clash.exit_code, 1);
  EXPECT_EQ(count(clash.err, "error:"), 1) << clash.err;
}

TEST(RunCli, WrongRankCountIsOneClearError) {
  Folder f;
  const std::string job = write_job(f, R"({"tp": 2})", 2);
  const Result one = run(direct("--job " + job), f);
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_NE(one.err.find("run it with mpirun -np 2"), std::string::npos) << one.err;
  const Result three = run(mpirun(3, "--job " + job), f);
  EXPECT_NE(three.exit_code, 0);
  EXPECT_EQ(count(three.err, "error:"), 1) << three.err;
  EXPECT_NE(three.err.find("3 ranks were started"), std::string::npos) << three.err;
}

TEST(RunCli, UnsupportedPlansAndBadFilesNameTheKey) {
  Folder f;
  const std::string job = write_job(f, R"({"tp": 2, "zero_stage": 3})", 2);
  const Result zero3 = run(mpirun(2, "--job " + job), f);
  EXPECT_EQ(zero3.exit_code, 1);
  EXPECT_NE(zero3.err.find("plan.zero_stage"), std::string::npos) << zero3.err;
  EXPECT_EQ(count(zero3.err, "error:"), 1) << zero3.err;
  const Result missing = run(mpirun(2, "--job " + f.file("nope.json")), f);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
  const Result usage = run(direct("--job " + job + " --dtype fp16"), f);
  EXPECT_EQ(usage.exit_code, 2);
}

TEST(RunCli, AFailingRankAbortsEveryRank) {
  Folder f;
  const std::string job = write_job(f, R"({"pp": 2})", 2);
  const Result r =
      run(mpirun(2, "--job " + job + " --steps 50", "-x PARPLAN_EXECUTOR_FAIL_AT=1:2"), f, 60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.seconds, 30);
  EXPECT_NE(r.err.find("error: rank 1: injected failure at step 3"), std::string::npos) << r.err;
}

// The pid of host rank `rank` of a run started with PARPLAN_TEST_MARK=mark.
pid_t find_rank(const std::string& mark, int rank) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (env.find("PARPLAN_TEST_MARK=" + mark) == std::string::npos) continue;
    if (env.find(std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0') ==
        std::string::npos) {
      continue;
    }
    return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

bool any_left(const std::string& mark) { return find_rank(mark, 0) > 0 || find_rank(mark, 1) > 0; }

// Starts `command` (its ranks tagged with PARPLAN_TEST_MARK=mark), sends `signal` to rank 1
// once it has run for a while, and waits for every rank to end; `seconds` counts from the
// signal. Fails the test if processes are left behind.
Result signal_rank_1(const std::string& command, const Folder& f, int signal,
                     const std::string& mark) {
  const auto start = Clock::now();
  setenv("PARPLAN_TEST_MARK", mark.c_str(), 1);
  const pid_t pid = spawn(command, f);
  unsetenv("PARPLAN_TEST_MARK");
  pid_t victim = -1;
  for (int i = 0; i < 200 && victim < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    victim = find_rank(mark, 1);
  }
  EXPECT_GT(victim, 0) << "rank 1 did not start";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // let it work
  const auto signalled = Clock::now();
  if (victim > 0) kill(victim, signal);
  Result r = finish(pid, f, start, 90);
  r.seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  for (int i = 0; i < 100 && any_left(mark); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(any_left(mark)) << "stray parplan processes remain";
  return r;
}

Result run_and_signal(const std::string& extra_args, int signal, const std::string& mark) {
  Folder f;
  const std::string job = write_job(f, R"({"pp": 2})", 2, 4, 64);
  return signal_rank_1(
      mpirun(2, "--job " + job + " --steps 100000 " + extra_args, "-x PARPLAN_TEST_MARK"), f,
      signal, mark);
}

TEST(RunCli, AKilledRankEndsTheJob) {
  const Result r = run_and_signal("", SIGKILL, "kill" + std::to_string(getpid()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.seconds, 30);
  EXPECT_NE(r.err.find("rank 1"), std::string::npos) << r.err;
}

// `parplan profile` under mpirun with one rank killed mid-run: every rank ends, non-zero,
// within 30 s, the message names the killed rank, no process is left behind.
TEST(RunCli, AKilledRankEndsAProfile) {
  Folder f;
  const std::string command =
      std::string(PARPLAN_MPIEXEC) +
      " -np 2 --oversubscribe --allow-run-as-root -x ASAN_OPTIONS=detect_leaks=0"
      " -x PARPLAN_TEST_MARK " +
      PARPLAN_BINARY + " profile --backend cpu --out " + f.file("profile.json");
  const Result r = signal_rank_1(command, f, SIGKILL, "profile" + std::to_string(getpid()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.seconds, 30);
  EXPECT_NE((r.out + r.err).find("rank 1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(f.file("profile.json"))) << "a half profile was written";
}

TEST(RunCli, AStalledRankIsCaughtByTheWatchdog) {
  const Result r = run_and_signal("--comm-timeout 2", SIGSTOP, "stop" + std::to_string(getpid()));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.seconds, 30);
  EXPECT_NE(r.err.find("error: rank 0:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did not complete within 2 s"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace parplan
