// planner::largest_part_differences: the parts two plans differ in, largest first, each with
// the plan keys behind it whose values differ.
#include "planner/plan_difference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "core/job.h"

namespace parplan::planner {
namespace {

Job job_with_plan(const std::string& plan) {
  const std::string text =
      R"({"model": {"name": "gpt-16l", "num_layers": 16, "hidden_size": 2048,
                    "num_attention_heads": 16, "vocab_size": 32000},
          "cluster": {"node": "dgx-h100", "num_nodes": 1},
          "training": {"global_batch_size": 16, "seq_length": 2048},
          "plan": )" +
      plan + "}";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Enforce);
}

TEST(PlanDifference, SamePlanDiffersInNothing) {
  const Job job = job_with_plan(R"({"tp": 2, "pp": 1, "dp": 4})");
  const auto estimate = cost::estimate_step(job);
  EXPECT_TRUE(largest_part_differences(job, estimate, job, estimate).empty());
}

TEST(PlanDifference, PartsComeLargestFirstWithTheKeysBehindThem) {
  const Job dp8 = job_with_plan(R"({"tp": 1, "pp": 1, "dp": 8, "micro_batch_size": 2})");
  const Job pp8 = job_with_plan(R"({"tp": 1, "pp": 8, "dp": 1, "micro_batch_size": 2})");
  const auto a = cost::estimate_step(dp8);
  const auto b = cost::estimate_step(pp8);
  const auto diffs = largest_part_differences(dp8, a, pp8, b);
  ASSERT_FALSE(diffs.empty());
  EXPECT_LE(diffs.size(), 3u);
  for (std::size_t i = 1; i < diffs.size(); ++i) {
    EXPECT_GE(std::abs(diffs[i - 1].a_minus_b_s), std::abs(diffs[i].a_minus_b_s));
  }
  // pp 8 with 8 micro-batches idles 7/15 of its step: the bubble leads, behind it pp 1 vs 8.
  EXPECT_EQ(diffs.front().part, "pipeline_bubble");
  EXPECT_LT(diffs.front().a_minus_b_s, 0.0);
  ASSERT_FALSE(diffs.front().keys.empty());
  EXPECT_EQ(diffs.front().keys.front().key, "pp");
  EXPECT_EQ(diffs.front().keys.front().value_a, "1");
  EXPECT_EQ(diffs.front().keys.front().value_b, "8");
  EXPECT_EQ(largest_part_differences(dp8, a, pp8, b, 1).size(), 1u);
}

// A calibrated per-micro-batch overhead differs between plans with different micro-batch
// counts; it is named with the count behind it (and a plain and a calibrated estimate, whose
// parts differ in name, compare by name).
TEST(PlanDifference, CalibratedOverheadsAreNamedWithTheMicroBatchCount) {
  Calibration c;
  c.micro_batch_overhead_s = 0.05;
  c.step_overhead_s = 0.01;
  const Job mbs1 = calibrated_job(job_with_plan(R"({"dp": 8, "micro_batch_size": 1})"), c);
  const Job mbs2 = calibrated_job(job_with_plan(R"({"dp": 8, "micro_batch_size": 2})"), c);
  const auto a = cost::estimate_step(mbs1);
  const auto b = cost::estimate_step(mbs2);
  const auto diffs = largest_part_differences(mbs1, a, mbs2, b, 10);
  const auto overhead = std::find_if(diffs.begin(), diffs.end(), [](const PartDifference& d) {
    return d.part == "micro_batch_overhead";
  });
  ASSERT_NE(overhead, diffs.end());
  EXPECT_NEAR(overhead->a_minus_b_s, 0.05 * (2 - 1), 1e-12);  // 2 vs 1 micro-batches
  ASSERT_EQ(overhead->keys.size(), 1u);
  EXPECT_EQ(overhead->keys.front().key, "micro-batches");
  // A part only one of the two plans has counts in full, whichever side has it.
  const Job plain = job_with_plan(R"({"dp": 8, "micro_batch_size": 1})");
  const auto plain_step = cost::estimate_step(plain);
  const auto overhead_difference = [](const std::vector<PartDifference>& differences) {
    for (const auto& d : differences) {
      if (d.part == "micro_batch_overhead") return std::optional<double>(d.a_minus_b_s);
    }
    return std::optional<double>();
  };
  const auto only_in_a =
      overhead_difference(largest_part_differences(mbs1, a, plain, plain_step, 10));
  const auto only_in_b =
      overhead_difference(largest_part_differences(plain, plain_step, mbs1, a, 10));
  ASSERT_TRUE(only_in_a.has_value());
  ASSERT_TRUE(only_in_b.has_value());
  EXPECT_NEAR(*only_in_a, 0.05 * 2, 1e-12);
  EXPECT_NEAR(*only_in_b, -0.05 * 2, 1e-12);
}

}  // namespace
}  // namespace parplan::planner
