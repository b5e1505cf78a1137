// `parplan validate --run --reprofile`: run three plans with the executor under mpirun, each
// predicted with a CPU profile of this machine measured right before it, and compare. The
// profile and the run are interleaved so that a shared machine's load moves both together:
// with one profile taken before all the runs, a loaded CI machine put the runs +55% to +90%
// off (median 82%), a test of the machine's load rather than of the model. The error bound
// here is still loose (a quick profile, two steps, CI's loaded machine; the case runs in CI's
// Release build, release_build); the target (median <= 15% over the full plan set in a
// Release build) is measured and reported in the notes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace parplan {
namespace {

TEST(ValidateRun, PredictsTheExecutorWithTheMachinesProfile) {
  // validate --run starts mpirun itself (profile and runs); its ranks inherit this environment.
  const auto r = test::run_parplan_with_env(
      test::kMpiRankAsanOptions, "validate --run --quick --steps 2 --ranks 2 --reprofile --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out);
  ASSERT_EQ(v["runs"].size(), 3u);
  EXPECT_EQ(v["profile"], "measured before each run");
  for (const auto& run : v["runs"]) {
    EXPECT_TRUE(run["profiled_before_run"].get<bool>());
    EXPECT_GT(run["predicted_step_time_s"].get<double>(), 0.0);
    EXPECT_GT(run["reference_step_time_s"].get<double>(), 0.0);
    EXPECT_GT(run["reference_memory_gib"].get<double>(), 0.0);
    std::printf("%s: predicted %.4f s, measured %.4f s (%+.1f%%); memory %+.1f%%\n",
                run["label"].get<std::string>().c_str(), run["predicted_step_time_s"].get<double>(),
                run["reference_step_time_s"].get<double>(),
                100 * run["step_time_error"].get<double>(),
                100 * run["memory_error"].get<double>());
  }
  EXPECT_LT(v["median_ape"].get<double>(), 0.6);
  EXPECT_LT(v["memory"]["median_ape"].get<double>(), 0.3);
}

TEST(ValidateRun, NeedsAProfile) {
  const auto r = test::run_parplan("validate --run");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--profile"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace parplan
