#include "planner/plan_groups.h"

#include <gtest/gtest.h>

#include <set>

#include "planner/search.h"

namespace parplan::planner {
namespace {

ParallelPlan base_plan() {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 4;
  p.dp = 2;
  p.vpp = 1;
  p.micro_batch_size = 1;
  p.sequence_parallel = true;
  p.recompute = Recompute::Selective;
  p.zero_stage = 1;
  return p;
}

TEST(PlanGroups, VppScheduleAndZeroBelowThreeAreVariantsOfOneLayout) {
  const ParallelPlan a = base_plan();
  ParallelPlan b = a;
  b.vpp = 5;
  b.schedule = ScheduleKind::Interleaved;
  b.zero_stage = 0;
  EXPECT_EQ(plan_group_key(a), plan_group_key(b));
  b.zero_stage = 2;
  EXPECT_EQ(plan_group_key(a), plan_group_key(b));
}

TEST(PlanGroups, LayoutKeysAndParameterShardingSeparateGroups) {
  const ParallelPlan a = base_plan();
  auto differs = [&](auto change) {
    ParallelPlan b = a;
    change(b);
    return plan_group_key(a) != plan_group_key(b);
  };
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.tp = 4, p.dp = 4; }));
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.pp = 2, p.dp = 4; }));
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.cp = 2, p.dp = 1; }));
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.ep = 2; }));
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.micro_batch_size = 2; }));
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.sequence_parallel = false; }));
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.recompute = Recompute::Full; }));
  EXPECT_TRUE(differs([](ParallelPlan& p) { p.zero_stage = 3; }));
}

Job job_70b_on_8_nodes() {
  const std::string text =
      R"({"model": "llama3.1-70b", "cluster": {"node": "dgx-h100", "num_nodes": 8},
          "training": {"global_batch_size": 128, "seq_length": 8192}})";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Skip);
}

// The distinct top K: K different layouts, the same best plan as the full list, each plan
// no slower than any variant of its layout the full list shows, and folded counts that add up.
TEST(PlanGroups, DistinctSearchKeepsTheBestVariantOfEachLayout) {
  const Job job = job_70b_on_8_nodes();
  SearchOptions all;
  all.top_k = 40;
  all.threads = 2;
  SearchOptions distinct = all;
  distinct.top_k = 6;
  distinct.distinct = true;
  const SearchResult full = search_plans(job, all);
  const SearchResult grouped = search_plans(job, distinct);
  ASSERT_EQ(grouped.top.size(), 6u);
  std::set<PlanGroupKey> keys;
  int64_t folded = 0;
  for (const auto& p : grouped.top) {
    EXPECT_TRUE(keys.insert(plan_group_key(p.plan)).second);
    folded += p.folded_variants;
    for (const auto& q : full.top) {
      if (plan_group_key(q.plan) == plan_group_key(p.plan)) {
        EXPECT_LE(p.estimate.step_time_s, q.estimate.step_time_s);
      }
    }
  }
  EXPECT_EQ(folded, grouped.folded_variants);
  EXPECT_GT(folded, 0);
  EXPECT_EQ(parallel_plan_to_json(grouped.top[0].plan), parallel_plan_to_json(full.top[0].plan));
  // The full list repeats layouts.
  std::set<PlanGroupKey> full_keys;
  for (std::size_t i = 0; i < 6; ++i) full_keys.insert(plan_group_key(full.top[i].plan));
  EXPECT_LT(full_keys.size(), 6u);
  // The k-th distinct layout is the k-th distinct layout of the full ranking.
  std::vector<PlanGroupKey> order;
  for (const auto& q : full.top) {
    if (std::find(order.begin(), order.end(), plan_group_key(q.plan)) == order.end()) {
      order.push_back(plan_group_key(q.plan));
    }
  }
  for (std::size_t i = 0; i < grouped.top.size() && i < order.size(); ++i) {
    EXPECT_EQ(plan_group_key(grouped.top[i].plan), order[i]) << i;
  }
}

}  // namespace
}  // namespace parplan::planner
