// tools/plan_sweep.h without searching: the --gpus grammar and its errors, the knee and the
// cheapest size within a deadline on hand-made rows.
#include "tools/plan_sweep.h"

#include <gtest/gtest.h>

#include "core/check.h"

namespace parplan::tools {
namespace {

TEST(PlanSweep, GpuSizesParseRangesStepsAndLists) {
  EXPECT_EQ(parse_gpu_sizes("1024:16384", 8),
            (std::vector<int64_t>{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(parse_gpu_sizes("8:32:8", 8), (std::vector<int64_t>{8, 16, 24, 32}));
  EXPECT_EQ(parse_gpu_sizes("64,16,32", 8), (std::vector<int64_t>{64, 16, 32}));
  EXPECT_EQ(parse_gpu_sizes("72:288:72", 72), (std::vector<int64_t>{72, 144, 216, 288}));
  EXPECT_EQ(parse_gpu_sizes("1024:16384:1024", 8).size(), 16u);
}

TEST(PlanSweep, BadGpuSizesAreInputErrorsNamingTheOption) {
  for (const char* text :
       {"12", "8:x", "32:8", "8:16:8:8", "", "8,,16", "-8", "0", "8:100000:8", "1:2000000000"}) {
    SCOPED_TRACE(text);
    try {
      parse_gpu_sizes(text, 8);
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "--gpus");
    }
  }
}

SweepRow row(int64_t gpus, double days, double gpu_hours) {
  SweepRow r;
  r.num_gpus = gpus;
  r.num_nodes = gpus / 8;
  r.best = planner::RankedPlan{};
  cost::TimeToTrain run;
  run.progresses = true;
  run.time_to_train_days = days;
  run.gpu_hours = gpu_hours;
  r.run = run;
  return r;
}

TEST(PlanSweep, KneeIsTheLastSizeBeforeAStepThatBuysLessThanHalfItsSpeedUp) {
  // 1024 -> 2048: 2x faster (efficiency 1); 2048 -> 4096: 1.8x (0.8); 4096 -> 8192: 1.3x (0.3).
  const std::vector<SweepRow> rows = {row(1024, 100, 0), row(2048, 50, 0), row(4096, 50 / 1.8, 0),
                                      row(8192, 50 / 1.8 / 1.3, 0)};
  ASSERT_TRUE(knee_index(rows));
  EXPECT_EQ(*knee_index(rows), 2u);
  // Every step pays: no knee.
  EXPECT_FALSE(knee_index({row(8, 40, 0), row(16, 20, 0), row(32, 10.5, 0)}));
}

TEST(PlanSweep, CheapestWithinTheDeadlineHasTheFewestGpuHours) {
  const std::vector<SweepRow> rows = {row(8, 90, 1000), row(16, 50, 1100), row(32, 20, 1300),
                                      row(64, 12, 1250)};
  EXPECT_EQ(*cheapest_within_deadline(rows, 60), 1u);
  EXPECT_EQ(*cheapest_within_deadline(rows, 25), 3u);
  EXPECT_FALSE(cheapest_within_deadline(rows, 5));
}

}  // namespace
}  // namespace parplan::tools
