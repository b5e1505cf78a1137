#include "planner/plan_space.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "planner/framework_support.h"

namespace parplan::planner {
namespace {

Job job_for(const std::string& model, const std::string& node, int64_t nodes, int64_t gbs,
            int64_t seq) {
  const std::string text = R"({"model": ")" + model + R"(", "cluster": {"node": ")" + node +
                           R"(", "num_nodes": )" + std::to_string(nodes) +
                           R"(}, "training": {"global_batch_size": )" + std::to_string(gbs) +
                           R"(, "seq_length": )" + std::to_string(seq) + "}}";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Skip);
}

TEST(PlanSpace, Divisors) {
  EXPECT_EQ(divisors(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(divisors(49), (std::vector<int64_t>{1, 7, 49}));
}

TEST(PlanSpace, FixesParseAndRejectBadInput) {
  const PlanFixes f = parse_fixes({"tp=8", "mbs=2", "recompute=full", "zero_stage=0",
                                   "sequence_parallel=true", "schedule=zero-bubble"});
  EXPECT_EQ(*f.tp, 8);
  EXPECT_EQ(*f.micro_batch_size, 2);
  EXPECT_EQ(*f.recompute, Recompute::Full);
  EXPECT_EQ(*f.zero_stage, 0);
  EXPECT_TRUE(*f.sequence_parallel);
  EXPECT_EQ(*f.schedule, ScheduleKind::ZeroBubble);
  EXPECT_THROW(parse_fixes({"tpp=8"}), InputError);
  EXPECT_THROW(parse_fixes({"tp=0"}), InputError);
  EXPECT_THROW(parse_fixes({"tp"}), InputError);
  EXPECT_THROW(parse_fixes({"zero_stage=4"}), InputError);
  EXPECT_THROW(parse_fixes({"recompute=some"}), InputError);
}

// A key pinned twice, under either of its names, is a usage error naming both pins.
TEST(PlanSpace, AKeyFixedTwiceIsAUsageError) {
  try {
    parse_fixes({"mbs=2", "micro_batch_size=4"});
    FAIL() << "duplicate accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--fix: micro_batch_size: found twice (\"mbs=2\" and \"micro_batch_size=4\"); "
              "allowed: each key once");
  }
  EXPECT_NO_THROW(parse_fixes({"tp=8", "pp=2"}));
}

// Pins whose product cannot divide the cluster are refused before any search, worded as
// simulate words a plan's tp*pp*cp that does not divide the GPUs.
TEST(PlanSpace, FixesMustFillTheCluster) {
  const Job job = job_for("llama3.1-8b", "dgx-h100", 32, 1024, 8192);
  auto message = [&](const std::vector<std::string>& fixes) -> std::string {
    try {
      check_fixes_fit_cluster(job, parse_fixes(fixes));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message({"tp=3"}),
            "--fix: tp: found 3; allowed: a divisor of the cluster's 256 GPUs (32 x dgx-h100)");
  EXPECT_EQ(message({"dp=7"}),
            "--fix: dp: found 7; allowed: a divisor of the cluster's 256 GPUs (32 x dgx-h100)");
  EXPECT_EQ(message({"tp=8", "cp=4", "pp=16"}),
            "--fix: tp: found tp*cp*pp = 8*4*16 = 512; allowed: a product that divides the "
            "cluster's 256 GPUs (32 x dgx-h100)");
  EXPECT_EQ(message({"tp=8", "cp=2", "pp=2", "dp=4"}),
            "--fix: tp: found tp*cp*pp*dp = 8*2*2*4 = 128; allowed: a product equal to the "
            "cluster's 256 GPUs (32 x dgx-h100)");
  EXPECT_EQ(
      message({"tp=1000000", "cp=1000000", "pp=1000000", "dp=1000000"}).find("more than 10^12") !=
          std::string::npos,
      true);
  EXPECT_EQ(message({"tp=8", "pp=4"}), "");
}

TEST(PlanSpace, EveryPlanIsValidAndFixesPin) {
  const Job job = job_for("llama3.1-8b", "dgx-h100", 4, 256, 8192);
  const Enumeration all = enumerate_plans(job, {});
  ASSERT_FALSE(all.plans.empty());
  int64_t rejected = 0;
  for (const auto& [reason, count] : all.rejected) rejected += count;
  EXPECT_EQ(static_cast<int64_t>(all.plans.size()) + rejected, all.considered);
  for (const auto& p : all.plans) {
    EXPECT_FALSE(check_plan(job.model, job.cluster, job.training, p).has_value());
    EXPECT_EQ(p.num_gpus(), 32);
  }
  const Enumeration pinned = enumerate_plans(job, parse_fixes({"tp=2", "recompute=none"}));
  ASSERT_FALSE(pinned.plans.empty());
  for (const auto& p : pinned.plans) {
    EXPECT_EQ(p.tp, 2);
    EXPECT_EQ(p.recompute, Recompute::None);
  }
  EXPECT_LT(pinned.plans.size(), all.plans.size());
}

// The plan Megatron-Bridge publishes for Llama 3.1 405B on 256 GB200 (pp 16, vpp 8: 128 chunks
// for 126 layers, the embedding and the output layer in chunks of their own) is in the space,
// and so is pp 8 x vpp 16, which splits the same 128 units evenly beyond max_vpp.
TEST(PlanSpace, ChunksForTheEmbeddingAndTheOutputLayerAreSearched) {
  Job job = job_for("llama3.1-405b", "gb200-nvl72", 1, 1536, 8192);
  job.cluster.num_gpus = 256;
  job.cluster.num_nodes = 1;
  const Enumeration all = enumerate_plans(job, parse_fixes({"tp=4", "recompute=none"}));
  bool pp16_vpp8 = false, pp8_vpp16 = false;
  for (const auto& p : all.plans) {
    EXPECT_FALSE(check_plan(job.model, job.cluster, job.training, p).has_value());
    pp16_vpp8 = pp16_vpp8 || (p.pp == 16 && p.vpp == 8);
    pp8_vpp16 = pp8_vpp16 || (p.pp == 8 && p.vpp == 16);
  }
  EXPECT_TRUE(pp16_vpp8);
  EXPECT_TRUE(pp8_vpp16);
}

// A heavy output layer (Llama 3's vocabulary of 128,256 x 8,192 against about 0.86B parameters
// per layer) makes the last pipeline stage the slowest: the space also holds the split that
// moves one layer from it to a middle stage, which on pp 8, vpp 5 is Megatron-Bridge's later
// Llama 3 70B H100 layout "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL". A light one (GPT-3 175B: 50,257 x
// 12,288 against 1.8B) and a framework without explicit splits (Megatron-DeepSpeed) add none.
TEST(PlanSpace, AHeavyOutputLayerAddsASplitThatLightensTheLastStage) {
  PlanFixes fixes;
  fixes.tp = 4;
  fixes.pp = 8;
  fixes.vpp = 5;
  fixes.cp = 1;
  fixes.micro_batch_size = 1;
  fixes.recompute = Recompute::None;
  fixes.sequence_parallel = true;
  fixes.zero_stage = 1;
  Job llama = job_for("llama3.1-70b", "dgx-h100", 8, 256, 8192);
  std::vector<int64_t> expected(40, 2);
  expected[35] = 3;  // chunk 4 of stage 3: index c * pp + s
  expected[39] = 1;  // chunk 4 of stage 7, with the output layer and loss
  int even = 0, split = 0;
  for (const auto& p : enumerate_plans(llama, fixes).plans) {
    if (p.layers_per_stage.empty()) {
      ++even;
    } else {
      ++split;
      EXPECT_EQ(p.layers_per_stage, expected);
      EXPECT_EQ(layer_split_description(p), "10,10,10,11,10,10,10,9");
    }
  }
  EXPECT_GT(even, 0);
  EXPECT_EQ(split, even);

  llama.framework = Framework::MegatronDeepspeed;
  PlanFixes deepspeed_fixes = fixes;
  deepspeed_fixes.vpp.reset();
  deepspeed_fixes.zero_stage.reset();
  deepspeed_fixes.sequence_parallel.reset();
  const auto deepspeed_plans = enumerate_plans(llama, deepspeed_fixes).plans;
  EXPECT_FALSE(deepspeed_plans.empty());
  for (const auto& p : deepspeed_plans) EXPECT_TRUE(p.layers_per_stage.empty());

  // An uneven default (126 layers on pp 8: 15,16,16,16,16,16,16,15) already lightens the last
  // stage; the layer goes to the lightest other stage, the first.
  PlanFixes uneven_fixes;
  uneven_fixes.pp = 8;
  uneven_fixes.vpp = 1;
  uneven_fixes.tp = 8;
  uneven_fixes.micro_batch_size = 1;
  int uneven_splits = 0;
  for (const auto& p :
       enumerate_plans(job_for("llama3.1-405b", "dgx-h100", 64, 512, 8192), uneven_fixes).plans) {
    if (p.layers_per_stage.empty()) continue;
    ++uneven_splits;
    EXPECT_EQ(layer_split_description(p), "16,16,16,16,16,16,16,14");
  }
  EXPECT_GT(uneven_splits, 0);

  PlanFixes gpt_fixes;
  gpt_fixes.pp = 8;
  const auto gpt_plans =
      enumerate_plans(job_for("gpt3-175b", "dgx-h100", 16, 256, 2048), gpt_fixes).plans;
  EXPECT_FALSE(gpt_plans.empty());
  for (const auto& p : gpt_plans) EXPECT_TRUE(p.layers_per_stage.empty());
}

TEST(PlanSpace, MoeModelsSearchExpertParallelism) {
  const Job job = job_for("mixtral-8x7b", "dgx-h100", 8, 512, 4096);
  const Enumeration all = enumerate_plans(job, parse_fixes({"recompute=none", "zero_stage=1"}));
  bool saw_ep = false;
  for (const auto& p : all.plans) saw_ep = saw_ep || p.ep > 1;
  EXPECT_TRUE(saw_ep);
}

TEST(FrameworkSupport, ThePlannerProposesOnlyWhatTheFrameworkRuns) {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 4;
  p.recompute = Recompute::Selective;
  EXPECT_FALSE(unsupported_by_framework(Framework::MegatronCore, p).has_value());
  // Megatron-DeepSpeed of the BLOOM / MT-NLG era checkpoints whole layers only.
  EXPECT_EQ(unsupported_by_framework(Framework::MegatronDeepspeed, p), "framework-recompute");
  p.recompute = Recompute::Full;
  EXPECT_FALSE(unsupported_by_framework(Framework::MegatronDeepspeed, p).has_value());
  p.sequence_parallel = true;
  EXPECT_EQ(unsupported_by_framework(Framework::MegatronDeepspeed, p), "framework-no-sp");
  p.sequence_parallel = false;
  p.cp = 2;
  EXPECT_EQ(unsupported_by_framework(Framework::MegatronLm, p), "framework-no-cp");
  // DeepSpeed alone has no Megatron tensor parallelism.
  p.cp = 1;
  EXPECT_EQ(unsupported_by_framework(Framework::Deepspeed, p), "framework-no-tp");
}

}  // namespace
}  // namespace parplan::planner
