#include "core/parallel_plan.h"

#include <gtest/gtest.h>

#include <numeric>

#include "core/job.h"
#include "core/presets.h"

namespace parplan {
namespace {

Job small_job(const std::string& plan_json) {
  const std::string text =
      R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 2},
      "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": )" +
      plan_json + "}";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Skip);
}

TEST(ParallelPlan, DpDerivedFromCluster) {
  const Job job = small_job(R"({"tp": 2, "pp": 2})");
  EXPECT_EQ(job.plan.dp, 4);
  EXPECT_FALSE(check_plan(job.model, job.cluster, job.training, job.plan).has_value());
}

TEST(ParallelPlan, ViolationsNameKeyAndReason) {
  auto reason = [](const std::string& plan) {
    const Job job = small_job(plan);
    auto v = check_plan(job.model, job.cluster, job.training, job.plan);
    return v ? v->reason : std::string("ok");
  };
  EXPECT_EQ(reason(R"({"tp": 2, "pp": 2, "dp": 2})"), "gpu-count");
  EXPECT_EQ(reason(R"({"tp": 16, "dp": 1})"), "ok");  // 8 kv heads replicated over tp 16
  EXPECT_EQ(reason(R"({"tp": 1, "dp": 16, "micro_batch_size": 3})"), "batch-by-dp-mbs");
  EXPECT_EQ(reason(R"({"tp": 1, "pp": 2, "vpp": 2, "schedule": "1f1b"})"), "schedule-vpp");
  EXPECT_EQ(reason(R"({"tp": 1, "pp": 1, "vpp": 2})"), "vpp-needs-pp");
  EXPECT_EQ(reason(R"({"ep": 2})"), "ep-without-moe");
  EXPECT_EQ(reason(R"({"tp": 1, "pp": 16, "vpp": 4})"), "layers-by-stages");
}

Job framework_job(const std::string& framework, const std::string& plan_json) {
  const std::string text = R"({"framework": ")" + framework +
                           R"(", "model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 2}, "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": )" +
                           plan_json + "}";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Skip);
}

TEST(ParallelPlan, FrameworksFillThePlanKeysTheJobLeavesOut) {
  const Job core = framework_job("megatron-core", R"({"tp": 2})");
  EXPECT_EQ(core.plan.zero_stage, 1);
  EXPECT_TRUE(core.plan.sequence_parallel);
  EXPECT_EQ(core.plan.recompute, Recompute::None);

  const Job titan = framework_job("torchtitan", R"({"tp": 2})");
  EXPECT_EQ(titan.plan.zero_stage, 3);
  EXPECT_TRUE(titan.plan.sequence_parallel);

  const Job mds = framework_job("megatron-deepspeed", R"({"tp": 2})");
  EXPECT_EQ(mds.plan.recompute, Recompute::Full);
  EXPECT_EQ(mds.plan.zero_stage, 1);
  EXPECT_FALSE(mds.plan.sequence_parallel);
  // Reports name the keys the framework filled.
  EXPECT_EQ(mds.plan.framework_default_keys, (std::vector<std::string>{"recompute", "zero_stage"}));
  EXPECT_EQ(core.plan.framework_default_keys,
            (std::vector<std::string>{"zero_stage", "sequence_parallel"}));

  const Job other = framework_job("other", R"({"tp": 2})");
  EXPECT_EQ(other.plan.recompute, Recompute::None);
  EXPECT_EQ(other.plan.zero_stage, 0);
}

TEST(ParallelPlan, KeysTheJobSetsOverrideFrameworkDefaults) {
  const Job mds =
      framework_job("megatron-deepspeed", R"({"tp": 2, "recompute": "none", "zero_stage": 0})");
  EXPECT_EQ(mds.plan.recompute, Recompute::None);
  EXPECT_EQ(mds.plan.zero_stage, 0);
  EXPECT_TRUE(mds.plan.framework_default_keys.empty());
  const Job core =
      framework_job("megatron-core", R"({"tp": 2, "zero_stage": 0, "sequence_parallel": false})");
  EXPECT_EQ(core.plan.zero_stage, 0);
  EXPECT_FALSE(core.plan.sequence_parallel);
}

// Chunk c of stage s sits at index c * pp + s: pp 2 with two chunks each, [a0 b0 a1 b1].
TEST(ParallelPlan, StageLayerCountsSumEachStagesChunks) {
  EXPECT_EQ(stage_layer_counts({3, 4, 5, 6}, 2), (std::vector<int64_t>{8, 10}));
  EXPECT_EQ(stage_layer_counts({10, 10, 11, 9}, 4), (std::vector<int64_t>{10, 10, 11, 9}));
  EXPECT_EQ(stage_layer_text({3, 4, 5, 6}, 2), "8,10");
  EXPECT_EQ(stage_layer_text({}, 2), "");
  ParallelPlan p;
  p.pp = 2;
  p.vpp = 2;
  p.layers_per_stage = {3, 4, 5, 6};
  EXPECT_EQ(layer_split_description(p), "8,10");
}

TEST(ParallelPlan, UnevenSplitGivesExtraLayersToMiddleChunks) {
  ModelSpec m;
  m.num_layers = 70;
  ParallelPlan p;
  p.pp = 12;
  const auto split = layers_per_chunk(m, p);
  EXPECT_EQ(std::accumulate(split.begin(), split.end(), int64_t{0}), 70);
  EXPECT_EQ(split.front(), 5);
  EXPECT_EQ(split.back(), 5);
  EXPECT_EQ(*std::max_element(split.begin(), split.end()), 6);
}

// Megatron-Core's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_
// split count the embedding and the output layer as layers: Megatron-Bridge runs Llama 3.1
// 405B's 126 layers on pp 16 x vpp 8 = 128 chunks, the first holding only the embedding and
// the last only the output layer. One chunk more than that holds nothing and is refused.
TEST(ParallelPlan, TheEndChunksMayHoldOnlyTheEmbeddingAndTheOutputLayer) {
  const std::string base = R"({"model": "llama3.1-405b", "cluster": {"node": "gb200-nvl72",
      "num_gpus": 256}, "training": {"global_batch_size": 1536, "seq_length": 8192}, "plan": )";
  auto parsed = [&](const std::string& plan) {
    return parse_job(parse_json(base + plan + "}", "job.json"), "job.json", "", PlanCheck::Skip);
  };
  const Job job = parsed(R"({"tp": 4, "pp": 16, "vpp": 8})");
  EXPECT_FALSE(check_plan(job.model, job.cluster, job.training, job.plan).has_value());
  const auto split = layers_per_chunk(job.model, job.plan);
  ASSERT_EQ(split.size(), 128u);
  EXPECT_EQ(split.front(), 0);
  EXPECT_EQ(split.back(), 0);
  EXPECT_EQ(std::count(split.begin(), split.end(), 1), 126);
  // 127 chunks: only the output layer's chunk is empty.
  ModelSpec m;
  m.num_layers = 126;
  ParallelPlan p;
  p.pp = 127;
  const auto one_short = layers_per_chunk(m, p);
  EXPECT_EQ(one_short.front(), 1);
  EXPECT_EQ(one_short.back(), 0);
  const Job too_many = parsed(R"({"tp": 2, "pp": 16, "vpp": 9, "micro_batch_size": 1})");
  const auto v = check_plan(too_many.model, too_many.cluster, too_many.training, too_many.plan);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->reason, "layers-by-stages");
}

}  // namespace
}  // namespace parplan
