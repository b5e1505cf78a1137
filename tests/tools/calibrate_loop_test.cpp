// The calibration loop on this machine (docs/calibration.md): profile the CPU with MPI, run a
// few small plans with the executor (`validate --run --quick --json`), calibrate on those
// runs, then validate again with the calibration. Three runs support one factor, and the
// automatic choice rarely keeps one for three (docs/calibration.md), so the test asks for the
// compute throughput. Checks the loop closes: the runs file is read back to the same
// predictions, the factor is fitted and lowers the fit's loss, and the second validation
// says it used the calibration. The error of the second run is printed, not gated (two
// executor runs on a shared machine differ by more than a calibration corrects).
#include <gtest/gtest.h>

#include <cmath>
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
  const auto c = test::run_parplan("calibrate --runs " + runs + " --out " + cal +
                                   " --factors compute_throughput_fraction --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json calibration = json::parse(c.out);
  const json measured = json::parse(first.out);
  ASSERT_EQ(calibration["runs"]["ids"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {  // the runs' jobs predict what validate predicted
    EXPECT_NEAR(calibration["fit"]["runs"][i]["uncalibrated_error"].get<double>(),
                measured["runs"][i]["step_time_error"].get<double>(), 1e-12);
  }
  int fitted = 0;
  for (const auto& [name, f] : calibration["factors"].items()) fitted += f["fitted"].get<bool>();
  EXPECT_EQ(fitted, 1);
  EXPECT_TRUE(calibration["factors"]["compute_throughput_fraction"]["fitted"].get<bool>());
  EXPECT_FALSE(calibration["leave_one_out"]["available"].get<bool>());  // 3 runs: no fold of 3
  // The fit lowers its objective, the Cauchy loss (scale 0.05) of the log step-time errors
  // (not necessarily the MAPE, which weighs outliers linearly).
  auto loss = [&](const char* key) {
    double sum = 0;
    for (const auto& run : calibration["fit"]["runs"]) {
      const double r = std::log1p(run[key].get<double>()) / 0.05;
      sum += 0.05 * 0.05 * std::log1p(r * r);
    }
    return sum;
  };
  EXPECT_LE(loss("calibrated_error"), loss("uncalibrated_error") + 1e-12);

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
