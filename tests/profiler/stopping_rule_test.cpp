// Unit tests of the measurement harness: sample statistics, the noise criterion, the sample
// loop's budget and the interleaved rounds, all on synthetic samples (no clock involved).
#include "profiler/stopping_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "profiler/sample_stats.h"

namespace parplan::profiler {
namespace {

TEST(SampleStats, MedianMeanStdevMad) {
  const std::vector<double> odd = {5, 1, 3};
  EXPECT_DOUBLE_EQ(median(odd), 3.0);
  const std::vector<double> even = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(even), 2.5);
  EXPECT_DOUBLE_EQ(mean(even), 2.5);
  EXPECT_NEAR(stdev(even), std::sqrt(5.0 / 3.0), 1e-12);
  // |x - 2.5| = {1.5, 1.5, 0.5, 0.5} -> MAD 1.0
  EXPECT_DOUBLE_EQ(median_absolute_deviation(even), 1.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{}), 0.0);
  EXPECT_DOUBLE_EQ(stdev(std::vector<double>{1.0}), 0.0);
}

TEST(SampleStats, RelativeNoiseEstimators) {
  const std::vector<double> samples = {1.0, 1.1, 0.9, 1.0, 1.0};
  EXPECT_NEAR(relative_noise(samples, NoiseEstimator::StdevOverMedian), stdev(samples), 1e-12);
  // MAD = 0 (three samples equal the median) -> robust noise 0.
  EXPECT_DOUBLE_EQ(relative_noise(samples, NoiseEstimator::MadOverMedian), 0.0);
  // An outlier moves stdev a lot and the MAD estimate not at all.
  const std::vector<double> outlier = {1.0, 1.01, 0.99, 1.0, 10.0};
  EXPECT_GT(relative_noise(outlier, NoiseEstimator::StdevOverMedian), 1.0);
  EXPECT_LT(relative_noise(outlier, NoiseEstimator::MadOverMedian), 0.02);
  EXPECT_TRUE(std::isinf(relative_noise(std::vector<double>{1.0}, NoiseEstimator::MadOverMedian)));
}

StoppingOptions options_for_test() {
  StoppingOptions o;
  o.warmup_runs = 2;
  o.min_samples = 5;
  o.max_samples = 100;
  o.max_noise = 0.01;
  o.budget_s = 1.0;
  o.estimator = NoiseEstimator::StdevOverMedian;
  return o;
}

TEST(StoppingRule, QuietSamplesStopAtMinimumCount) {
  int warmups = 0;
  int taken = 0;
  const Measurement m = run_samples([&] { ++warmups; },
                                    [&] {
                                      ++taken;
                                      return Sample{1e-3 * (1 + 0.001 * (taken % 2)), 1e-3};
                                    },
                                    make_noise_criterion(options_for_test()), options_for_test());
  EXPECT_EQ(warmups, 2);
  EXPECT_EQ(m.count, 5);
  EXPECT_TRUE(m.converged);
  EXPECT_NEAR(m.median_s, 1e-3, 2e-6);
  EXPECT_LT(m.noise, 0.01);
  EXPECT_EQ(m.samples_s.size(), 5u);
}

TEST(StoppingRule, NoisySamplesRunUntilTheBudgetAndSaySo) {
  int taken = 0;
  // Alternating 1 and 2 ms: ~35 % noise never drops below 1 %; each sample costs 1/8 s.
  const Measurement m = run_samples([] {},
                                    [&] {
                                      return Sample{(++taken % 2) ? 1e-3 : 2e-3, 0.125};
                                    },
                                    make_noise_criterion(options_for_test()), options_for_test());
  EXPECT_FALSE(m.converged);
  EXPECT_EQ(m.count, 8);  // 8 x 1/8 s reaches the 1 s budget
  EXPECT_GT(m.noise, 0.2);
  EXPECT_NE(describe(m).find("budget ended first"), std::string::npos);
}

TEST(StoppingRule, AtLeastTwoSamplesEvenPastTheBudget) {
  StoppingOptions o = options_for_test();
  o.budget_s = 0.01;
  const Measurement m = run_samples([] {},
                                    [] {
                                      return Sample{1.0, 1.0};
                                    },
                                    make_noise_criterion(o), o);
  EXPECT_EQ(m.count, 2);
  EXPECT_FALSE(m.converged);
}

TEST(StoppingRule, MinTimeDelaysStopping) {
  StoppingOptions o = options_for_test();
  constexpr double kSample = 1.0 / 1024;  // exact in binary, so the sum is too
  o.min_time_s = 50 * kSample;
  const Measurement m = run_samples([] {},
                                    [] {
                                      return Sample{kSample, kSample};
                                    },
                                    make_noise_criterion(o), o);
  EXPECT_TRUE(m.converged);
  EXPECT_EQ(m.count, 50);
}

TEST(StoppingRule, SampleCountCriterion) {
  StoppingOptions o = options_for_test();
  o.min_samples = 1;
  int taken = 0;
  const Measurement m =
      run_samples([] {},
                  [&] {
                    return Sample{(++taken % 2) ? 1.0 : 3.0, 0.0};
                  },
                  std::make_unique<SampleCountCriterion>(7, NoiseEstimator::MadOverMedian), o);
  EXPECT_EQ(m.count, 7);
  EXPECT_TRUE(m.converged);
  EXPECT_DOUBLE_EQ(m.median_s, 1.0);  // four 1s and three 3s
}

TEST(StoppingRule, DisturbedSamplesAreSetAside) {
  // Every third sample was disturbed (a rank lost its core) and is 3x slower.
  int taken = 0;
  const Measurement m = run_samples([] {},
                                    [&] {
                                      const bool disturbed = ++taken % 3 == 0;
                                      return Sample{disturbed ? 3e-3 : 1e-3, 1e-3, disturbed};
                                    },
                                    make_noise_criterion(options_for_test()), options_for_test());
  EXPECT_TRUE(m.converged);
  EXPECT_EQ(m.count, 5);
  EXPECT_EQ(m.disturbed, 2);
  EXPECT_DOUBLE_EQ(m.median_s, 1e-3);
  EXPECT_NE(describe(m).find("2 disturbed"), std::string::npos);
}

TEST(StoppingRule, OnlyDisturbedSamplesAreStillReported) {
  StoppingOptions o = options_for_test();
  o.budget_s = 0.01;
  const Measurement m = run_samples([] {},
                                    [] {
                                      return Sample{2e-3, 2e-3, true};
                                    },
                                    make_noise_criterion(o), o);
  EXPECT_FALSE(m.converged);
  EXPECT_TRUE(m.disturbed_only);
  EXPECT_EQ(m.count, 5);  // 5 x 2 ms reach the 10 ms budget
  EXPECT_DOUBLE_EQ(m.median_s, 2e-3);
}

TEST(StoppingRule, InterleavedRoundsSampleEachMeasurementInTurn) {
  std::vector<int> order;
  int prepared = 0;
  auto probe = [&](int id, double seconds, double noise) {
    auto count = std::make_shared<int>(0);
    return Probe{[&prepared] { ++prepared; },
                 [&order, id, seconds, noise, count] {
                   order.push_back(id);
                   const double s = seconds * (1 + ((++*count) % 2 ? noise : -noise));
                   return Sample{s, s};
                 }};
  };
  // Probe 0 is quiet (stops after 5), probe 1 is noisy (runs to its 0.05 s budget).
  StoppingOptions o = options_for_test();
  o.budget_s = 0.05;
  const auto results = run_interleaved({probe(0, 1e-3, 0.0), probe(1, 1e-3, 0.3)}, o);
  EXPECT_EQ(prepared, 2);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].converged);
  EXPECT_EQ(results[0].count, 5);
  EXPECT_FALSE(results[1].converged);
  EXPECT_GT(results[1].count, 5);
  // Rounds: 0,1,0,1,... while both run, then 1 alone.
  ASSERT_GE(order.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i % 2);
  for (std::size_t i = 10; i < order.size(); ++i) EXPECT_EQ(order[i], 1);
}

}  // namespace
}  // namespace parplan::profiler
