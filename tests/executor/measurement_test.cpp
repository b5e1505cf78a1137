// The executor's measurement: allocation tracking, phase accounting, trace events and the
// communication watchdog.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "executor/memory_tracker.h"
#include "executor/phase_timer.h"
#include "executor/watchdog.h"

namespace parplan::executor {
namespace {

MemoryTracker host_tracker() {
  return MemoryTracker([](std::size_t n) { return std::malloc(n); }, [](void* p) { std::free(p); });
}

TEST(MemoryTracker, PeakAndItsSplitByKind) {
  MemoryTracker tracker = host_tracker();
  DeviceBuffer<float> params(tracker, 100, MemoryKind::Parameters);
  {
    DeviceBuffer<double> acts(tracker, 50, MemoryKind::Activations);
    EXPECT_EQ(tracker.current_bytes(), 800);
  }
  DeviceBuffer<float> grads(tracker, 10, MemoryKind::Gradients);
  EXPECT_EQ(tracker.current_bytes(), 440);
  EXPECT_EQ(tracker.peak_bytes(), 800);
  EXPECT_EQ(tracker.peak_by_kind()[static_cast<int>(MemoryKind::Activations)], 400);
  EXPECT_EQ(tracker.peak_by_kind()[static_cast<int>(MemoryKind::Gradients)], 0);
  DeviceBuffer<float> moved = std::move(grads);
  EXPECT_TRUE(grads.empty());
  moved.reset();
  EXPECT_EQ(tracker.current_bytes(), 400);
  tracker.reset_peak();
  EXPECT_EQ(tracker.peak_bytes(), 400);
}

TEST(PhaseTimer, PhasesAddUpToTheStepAndNestingRestores) {
  PhaseTimer timer({}, true, "rank 0", "stage 0");
  timer.start_clock();
  timer.begin_step();
  {
    PhaseScope compute(timer, Phase::Compute, Track::Stage, "F", 3, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    {
      PhaseScope comm(timer, Phase::TpComm, Track::TpComm, "all_reduce");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(timer.current(), Phase::Compute);
  }
  EXPECT_EQ(timer.current(), Phase::Other);
  timer.end_step();
  const auto& s = timer.step_seconds();
  EXPECT_GE(s[static_cast<int>(Phase::Compute)], 0.019);
  EXPECT_GE(s[static_cast<int>(Phase::TpComm)], 0.009);
  EXPECT_LT(s[static_cast<int>(Phase::TpComm)], s[static_cast<int>(Phase::Compute)]);
  double sum = 0;
  for (double v : s) sum += v;
  EXPECT_DOUBLE_EQ(sum, timer.step_total_s());
  ASSERT_EQ(timer.events().size(), 2u);
  EXPECT_EQ(timer.events()[0].name, "all_reduce");
  EXPECT_EQ(timer.events()[0].track, "tp comm");
  EXPECT_EQ(timer.events()[0].category, "tp_comm");
  EXPECT_EQ(timer.events()[1].name, "F mb3 c1");
  EXPECT_EQ(timer.events()[1].track, "stage 0");
  EXPECT_EQ(std::string(to_string(Phase::PipelineBubble)), "pipeline_bubble");
}

TEST(WatchdogDeathTest, StalledCommunicationEndsTheProcessWithAClearError) {
  EXPECT_EXIT(
      {
        Watchdog watchdog(0.3, 5);
        watchdog.arm("all_reduce");
        std::this_thread::sleep_for(std::chrono::seconds(5));
      },
      ::testing::ExitedWithCode(1), "rank 5: all_reduce did not complete within 0.3 s");
}

TEST(Watchdog, DisarmedCallsNeverFire) {
  Watchdog watchdog(0.2, 0);
  for (int i = 0; i < 5; ++i) {
    watchdog.arm("barrier");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    watchdog.disarm();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  SUCCEED();
}

}  // namespace
}  // namespace parplan::executor
