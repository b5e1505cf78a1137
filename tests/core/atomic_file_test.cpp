// core/atomic_file: whole files or nothing, even when the write fails (a file-size limit) or
// the writer is killed mid-write (SIGTERM, SIGKILL); refusing to write over an input; and a
// scan of the sources that every file parplan writes goes through write_file_atomically.
#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "core/check.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A fresh folder per test.
fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::path(testing::TempDir()) / ("atomic_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Temporary files write_file_atomically leaves behind (".NAME.tmp.XXXXXX").
std::vector<fs::path> temp_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().find(".tmp.") != std::string::npos) {
      out.push_back(entry.path());
    }
  }
  return out;
}

TEST(AtomicFile, WritesAndReplacesWholeFiles) {
  const fs::path dir = scratch("replace");
  const std::string path = (dir / "out.json").string();
  write_file_atomically(path, "first");
  EXPECT_EQ(slurp(path), "first");
  write_file_atomically(path, std::string(100000, 'x'));
  EXPECT_EQ(slurp(path), std::string(100000, 'x'));
  write_file_atomically(path, "");
  EXPECT_EQ(slurp(path), "");
  EXPECT_TRUE(temp_files(dir).empty());
  fs::remove_all(dir);
}

TEST(AtomicFile, MissingFolderOrDirectoryTargetIsAnError) {
  const fs::path dir = scratch("errors");
  EXPECT_THROW(write_file_atomically((dir / "no" / "such" / "out.json").string(), "x"), InputError);
  EXPECT_THROW(write_file_atomically(dir.string(), "x"), InputError);
  EXPECT_TRUE(temp_files(dir).empty());
  fs::remove_all(dir);
}

// A write that fails part-way (here: the file-size limit, EFBIG) throws, keeps the old file
// and removes its temporary file.
TEST(AtomicFile, FailingWriteKeepsTheOldFile) {
  const fs::path dir = scratch("failing");
  const std::string path = (dir / "out.json").string();
  write_file_atomically(path, "old");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);  // the failing write returns EFBIG instead of killing us
    rlimit limit{64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    try {
      write_file_atomically(path, std::string(1 << 20, 'n'));
    } catch (const Error& e) {
      _exit(std::string(e.what()).find("write failed") != std::string::npos ? 0 : 2);
    }
    _exit(1);  // the write should not have succeeded
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error, 2: another error, 3: no rlimit";
  EXPECT_EQ(slurp(path), "old");
  EXPECT_TRUE(temp_files(dir).empty());
  fs::remove_all(dir);
}

// A child rewrites one file in a loop, alternating two 2 MiB contents; it is killed at
// varying moments. The file is always one of the two contents (or the first), never a mix
// or a prefix.
TEST(AtomicFile, InterruptedWriterLeavesOldOrNewNeverHalf) {
  const fs::path dir = scratch("interrupted");
  const std::string path = (dir / "trace.json").string();
  const std::size_t size = 2 << 20;
  const std::string first = "initial";
  write_file_atomically(path, first);
  int rounds_with_writes = 0;
  for (int round = 0; round < 8; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        for (int i = 0;; ++i) write_file_atomically(path, std::string(size, i % 2 ? 'b' : 'a'));
      } catch (...) {
        _exit(1);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(3 + 7 * round));
    kill(pid, round % 2 ? SIGKILL : SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended by itself";
    // The killed writer may leave its temporary file (a hidden ".trace.json.tmp.XXXXXX"),
    // never more than one.
    EXPECT_LE(temp_files(dir).size(), 1u);
    for (const auto& temp : temp_files(dir)) fs::remove(temp);
    const std::string text = slurp(path);
    if (text == first) continue;
    ++rounds_with_writes;
    ASSERT_EQ(text.size(), size) << "round " << round << ": a partial file";
    EXPECT_EQ(text.find_first_not_of(text[0]), std::string::npos) << "a mix of two writes";
    EXPECT_TRUE(text[0] == 'a' || text[0] == 'b');
  }
  EXPECT_GT(rounds_with_writes, 0) << "the writer never finished a file: the test proves nothing";
  fs::remove_all(dir);
}

TEST(AtomicFile, RefusesToOverwriteAnInput) {
  const fs::path dir = scratch("inputs");
  const std::string job = (dir / "job.json").string();
  write_file_atomically(job, "{}");
  const std::string other = (dir / "out.json").string();

  // The same file, however it is spelt: the path, "./", "sub/..", a symlink, a hard link.
  fs::create_directories(dir / "sub");
  fs::create_symlink(job, dir / "link.json");
  fs::create_hard_link(job, dir / "hard.json");
  for (const std::string& output :
       {job, (dir / "." / "job.json").string(), (dir / "sub" / ".." / "job.json").string(),
        (dir / "link.json").string(), (dir / "hard.json").string()}) {
    SCOPED_TRACE(output);
    try {
      check_not_overwriting_inputs(output, {"", other, job});
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), output);
      EXPECT_NE(std::string(e.what()).find("the same file as the input " + job), std::string::npos)
          << e.what();
    }
  }
  // A new file, or an existing file that is no input, is fine.
  EXPECT_NO_THROW(check_not_overwriting_inputs(other, {job}));
  write_file_atomically(other, "x");
  EXPECT_NO_THROW(check_not_overwriting_inputs(other, {job, (dir / "missing.json").string()}));
  fs::remove_all(dir);
}

// Every file parplan writes goes through write_file_atomically: no other file-writing call
// appears in the libraries or the tools (tests may write their fixtures as they like).
TEST(OutputFiles, EveryWriteGoesThroughAtomicFile) {
  const std::regex writer(
      R"(\bofstream\b|\bstd::fstream\b|\bfopen\s*\([^;]*"[wa]|\bO_WRONLY\b|\bO_CREAT\b|\bcreat\s*\()");
  int scanned = 0;
  std::vector<std::string> offenders;
  for (const char* folder : {"core", "cost_models", "planner", "profiler", "executor", "tools"}) {
    const fs::path root = fs::path(PARPLAN_SOURCE_DIR) / folder;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh") continue;
      if (entry.path().filename() == "atomic_file.cpp") continue;
      ++scanned;
      std::ifstream in(entry.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        const auto start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line.compare(start, 2, "//") == 0) continue;
        if (std::regex_search(line, writer)) {
          offenders.push_back(fs::relative(entry.path(), PARPLAN_SOURCE_DIR).string() + ":" +
                              std::to_string(number) + ": " + line);
        }
      }
    }
  }
  EXPECT_GT(scanned, 50);
  for (const auto& o : offenders) {
    ADD_FAILURE() << "writes a file without core/atomic_file.h: " << o;
  }
}

}  // namespace
}  // namespace parplan
