// profiler/warning_summary.h: repeated profile warnings collapse into one counted line.
#include "profiler/warning_summary.h"

#include <gtest/gtest.h>

namespace parplan::profiler {
namespace {

TEST(WarningSummary, RepeatedKindsBecomeOneCountedLine) {
  const std::vector<std::string> warnings = {
      "one rank: no collectives measured (run under mpirun -np N for collectives)",
      "GEMM fp32 512x512x512: median 1.2 ms, noise 7.0% (20 samples), budget ended first",
      "GEMM fp32 1024x1024x1024: median 9.8 ms, noise 6.1% (12 samples), budget ended first",
      "GEMM fp64 512x512x512: median 2.4 ms, noise 9.0% (10 samples), budget ended first",
      "GEMM fp32 2048x2048x2048: median 80 ms, noise 5.5% (5 samples), budget ended first",
      "all_reduce group 2 1048576 B: median 1 ms, noise 8% (9 samples), budget ended first",
      "all_reduce group 2 2097152 B: median 2 ms, noise 8% (9 samples), budget ended first",
  };
  const auto lines = summarize_warnings(warnings);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], warnings[0]);
  EXPECT_EQ(lines[1],
            "3 GEMM fp32 measurements ended their time budget before reaching the noise "
            "threshold (e.g. " +
                warnings[1] + ")");
  EXPECT_EQ(lines[2], warnings[3]);  // alone of its kind: as it is
  EXPECT_EQ(lines[3].rfind("2 all_reduce measurements ended their time budget", 0), 0u) << lines[3];
}

TEST(WarningSummary, OtherRepeatsAreCountedWithAnExample) {
  const auto lines = summarize_warnings({"largest collective size capped at 64 MiB by memory",
                                         "largest collective size capped at 32 MiB by memory"});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "2 x largest collective size capped at (e.g. largest collective size capped at 64 "
            "MiB by memory)");
  EXPECT_TRUE(summarize_warnings({}).empty());
}

}  // namespace
}  // namespace parplan::profiler
