// `parplan profile` end to end on one process (no mpirun: MPI singleton or no MPI): a quick
// CPU profile is written, valid and summarised; bad options fail with the documented exit
// codes and clear messages; --backend cuda in a build without CUDA is a clear error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/check.h"
#include "core/hardware_profile.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Result run(const std::string& args) {
  const std::string command = std::string(PARPLAN_BINARY) + " " + args + " 2>&1";
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string temp_path(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("parplan_profile_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

TEST(ProfileCli, QuickCpuProfileOnOneRank) {
  const std::string out = temp_path("one_rank.json");
  const Result r = run("profile --backend cpu --quick --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("GEMM"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("copy"), std::string::npos) << r.output;
  const HardwareProfile profile = load_hardware_profile(out);
  EXPECT_EQ(profile.device["backend"], "cpu");
  EXPECT_EQ(profile.coverage["ranks"], 1);
  EXPECT_TRUE(profile.measurements["collectives"].empty());
  EXPECT_GE(profile.measurements["gemm"].size(), 30u);
  EXPECT_GT(profile.node.gpu.peak_tflops(Precision::Fp32), 0.0);
  EXPECT_GT(profile.node.gpu.hbm_bandwidth_gbps, 0.0);
  EXPECT_FALSE(profile.measured_span("intra_node"));
  // One rank: collectives skipped with a warning, not silently.
  bool warned = false;
  const Json doc = load_json_file(out);
  for (const auto& w : doc["warnings"]) {
    warned = warned || w.get<std::string>().find("no collectives") != std::string::npos;
  }
  EXPECT_TRUE(warned);
  const double fit_rms = profile.fits["gemm"]["node"]["rms_relative_error"].get<double>();
  std::printf(
      "one-rank quick profile: %.1f s, fp32 asymptote %.4f TFLOP/s, GEMM fit rms %.1f %%, "
      "copy %.2f GB/s\n",
      profile.coverage["elapsed_s"].get<double>(), profile.node.gpu.peak_tflops(Precision::Fp32),
      100 * fit_rms, profile.node.gpu.hbm_bandwidth_gbps);
}

TEST(ProfileCli, UsageAndInputErrors) {
  EXPECT_EQ(run("profile --backend cpu").exit_code, 2);               // --out missing
  EXPECT_EQ(run("profile --backend tpu --out x.json").exit_code, 2);  // not a choice
  const Result sizes = run("profile --backend cpu --quick --collective-sizes 8,abc --out " +
                           temp_path("never.json"));
  EXPECT_EQ(sizes.exit_code, 1);
  EXPECT_NE(sizes.output.find("--collective-sizes"), std::string::npos) << sizes.output;
  const Result shapes = run("profile --backend cpu --gemm-shapes 1x2 --out " + temp_path("n.json"));
  EXPECT_EQ(shapes.exit_code, 1);
  EXPECT_NE(shapes.output.find("--gemm-shapes"), std::string::npos) << shapes.output;
  const Result folder = run("profile --backend cpu --quick --out /nonexistent/folder/p.json");
  EXPECT_EQ(folder.exit_code, 1) << folder.output;
  EXPECT_NE(folder.output.find("folder"), std::string::npos) << folder.output;
}

TEST(ProfileCli, CudaBackendWithoutCudaIsAClearError) {
  if (PARPLAN_TEST_CUDA_BUILT) GTEST_SKIP() << "this build has CUDA";
  const Result r = run("profile --backend cuda --quick --out " + temp_path("cuda.json"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("built without CUDA"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parplan
