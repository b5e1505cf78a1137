// profiler/kernel_records: CUPTI's kernel records per measurement window (the CPU half of
// profiler/cuda/cupti_kernel_timer.cpp).
#include "profiler/kernel_records.h"

#include <gtest/gtest.h>

#include <string>

#include "core/check.h"

namespace parplan::profiler {
namespace {

TEST(KernelRecords, AWindowSpansItsTimestampedKernels) {
  KernelRecordCollector c;
  c.begin_window();
  c.add({"gemm", 5'000'000'000, 5'000'400'000, 16});
  c.add({"untimed", 0, 0, 1});  // no timestamp: skipped, not taken for t = 0
  c.add({"reduce", 5'000'300'000, 5'001'000'000, 2});
  const KernelWindow w = c.end_window();
  ASSERT_EQ(w.kernels.size(), 2u);
  EXPECT_EQ(w.kernels[1].name, "reduce");
  EXPECT_NEAR(w.seconds, 1e-3, 1e-15);
  // Only untimed records: an empty window, not the time since the epoch.
  c.begin_window();
  c.add({"untimed", 0, 0, 1});
  EXPECT_EQ(c.end_window().seconds, 0.0);
}

TEST(KernelRecords, ADropFailsOnlyItsOwnWindow) {
  KernelRecordCollector c;
  c.begin_window();
  c.add({"gemm", 100, 200, 1});
  c.add_dropped(3);
  try {
    c.end_window();
    ADD_FAILURE() << "a window with dropped records passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUPTI dropped 3 kernel records"), std::string::npos);
  }
  c.begin_window();
  c.add({"gemm", 1000, 1500, 1});
  const KernelWindow next = c.end_window();
  EXPECT_EQ(next.kernels.size(), 1u);
  EXPECT_NEAR(next.seconds, 500e-9, 1e-18);
  // Drops reported before a window starts belong to an earlier one.
  c.add_dropped(1);
  c.begin_window();
  EXPECT_NO_THROW(c.end_window());
}

}  // namespace
}  // namespace parplan::profiler
