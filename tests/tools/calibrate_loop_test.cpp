// The calibration loop on this machine (docs/calibration.md): profile the CPU with MPI, run a
// few small plans with the executor (`validate --run --quick --json`), calibrate on those
// runs, then validate again with the calibration. Checks the loop closes: the runs file is
// accepted, the calibration fits no more than the runs support, and the second validation
// says it used it. The error after calibration is printed, not gated (two executor runs on a
// shared machine differ by more than a calibration corrects).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace parplan {
namespace {

using nlohmann::json;

TEST(CalibrateLoop, ProfileRunCalibrateValidate) {
  const std::string dir = testing::TempDir();
  const std::string profile = dir + "/loop_profile.json";
  const auto p = test::run_parplan_mpi(2, "profile --backend cpu --quick --out " + profile);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string validate = "validate --run --quick --steps 2 --ranks 2 --profile " + profile;
  const auto first = test::run_parplan_with_env(test::kMpiRankAsanOptions, validate + " --json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string runs = dir + "/loop_runs.json";
  std::ofstream(runs) << first.out;

  const std::string cal = dir + "/loop_cal.json";
  const auto c = test::run_parplan("calibrate --runs " + runs + " --out " + cal + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json calibration = json::parse(c.out);
  EXPECT_EQ(calibration["runs"]["ids"].size(), 3u);
  int fitted = 0;
  for (const auto& [name, f] : calibration["factors"].items()) fitted += f["fitted"].get<bool>();
  EXPECT_LE(fitted, 2);  // one step-time factor for 3 runs, and the memory overhead
  EXPECT_FALSE(calibration["factors"]["inter_node_busbw_fraction"]["fitted"].get<bool>());
  EXPECT_LE(calibration["fit"]["calibrated_mape"].get<double>(),
            calibration["fit"]["uncalibrated_mape"].get<double>() + 1e-12);

  const auto second = test::run_parplan_with_env(test::kMpiRankAsanOptions,
                                                 validate + " --calibration " + cal + " --json");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const json after = json::parse(second.out);
  EXPECT_EQ(after["calibration"]["file"], cal);
  std::printf(
      "step-time MAPE: %.1f%% before calibration; %.1f%% in sample after; %.1f%% on a "
      "new run with it\n",
      100 * json::parse(first.out)["mape"].get<double>(),
      100 * calibration["fit"]["calibrated_mape"].get<double>(), 100 * after["mape"].get<double>());
}

}  // namespace
}  // namespace parplan
