// Tests of the CPU backend's pieces on one process: host facts, Eigen GEMM timing, STREAM
// bandwidth and the lockstep timer's calibration. Short budgets keep them under a second.
#include "profiler/cpu_backend.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "core/units.h"
#include "profiler/cpu_timing.h"
#include "profiler/host_info.h"

namespace parplan::profiler {
namespace {

ProfileOptions fast_options() {
  ProfileOptions o = default_profile_options(true);
  o.stopping.budget_s = 0.02;
  o.stopping.max_noise = 0.5;
  o.target_sample_s = 0.001;
  return o;
}

TEST(HostInfo, PlausibleFacts) {
  EXPECT_FALSE(host_name().empty());
  EXPECT_FALSE(cpu_model_name().empty());
  // /proc/cpuinfo's vendor_id on x86 (GenuineIntel, AuthenticAMD), its CPU implementer lines
  // on Arm.
  const std::string vendor = cpu_vendor();
#if defined(__x86_64__)
  EXPECT_TRUE(vendor == "intel" || vendor == "amd") << vendor;
#elif defined(__aarch64__)
  EXPECT_EQ(vendor, "arm");
#endif
  EXPECT_GE(cpu_core_count(), 1);
  EXPECT_GT(host_memory_bytes(), 64 * kMiB);
  EXPECT_GT(available_memory_bytes(), 0.0);
  EXPECT_LE(available_memory_bytes(), host_memory_bytes());
  std::string source;
  const double llc = last_level_cache_bytes(&source);
  EXPECT_FALSE(source.empty());
  EXPECT_GE(llc, 0.0);
  const std::string now = utc_timestamp();
  EXPECT_EQ(now.size(), 20u);
  EXPECT_EQ(now.back(), 'Z');
}

TEST(CpuTiming, RepetitionsFillTheTarget) {
  EXPECT_EQ(repetitions_for(1e-6, 1e-3), 1000);
  EXPECT_EQ(repetitions_for(2e-3, 1e-3), 1);
  EXPECT_EQ(repetitions_for(0.0, 1e-3, 50), 50);
}

TEST(CpuBackend, GemmTimesScaleWithWork) {
  auto group = make_single_process_group();
  const auto records =
      measure_cpu_gemms(*group, {{64, 64, 64, 1}, {128, 128, 128, 1}}, "fp32", fast_options());
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {
    EXPECT_GT(r.time.median_s, 0.0);
    EXPECT_GE(r.time.count, 2);
    EXPECT_GT(r.tflops(), 1e-4);  // any CPU of this century
  }
  // 8x the FLOPs takes clearly longer.
  EXPECT_GT(records[1].time.median_s, 2.0 * records[0].time.median_s);
  EXPECT_THROW(measure_cpu_gemms(*group, {{8, 8, 8, 1}}, "bf16", fast_options()), InputError);
}

TEST(CpuBackend, StreamBandwidthIsPositive) {
  auto group = make_single_process_group();
  const auto records = measure_cpu_memory_bandwidth(*group, fast_options(), 16 * kMiB);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].kernel, "copy");
  EXPECT_EQ(records[1].kernel, "triad");
  EXPECT_DOUBLE_EQ(records[0].bytes, 32 * kMiB);
  EXPECT_GT(records[0].gbps(), 0.1);
  EXPECT_GT(records[1].gbps(), 0.1);
}

}  // namespace
}  // namespace parplan::profiler
