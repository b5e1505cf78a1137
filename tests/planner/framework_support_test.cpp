// planner/framework_support against each framework's description (core/frameworks/): the
// planner rejects exactly the plans the description's PlannerSupport forbids, with the tag of
// the dimension it forbids, and never a plan the framework fills in by default.
#include "planner/framework_support.h"

#include <gtest/gtest.h>

#include "core/frameworks/registry.h"

namespace parplan::planner {
namespace {

// The lowest ZeRO stage the framework allows (every framework's list is non-empty).
int lowest_zero_stage(const PlannerSupport& s) {
  for (int stage = 0; stage <= 3; ++stage) {
    if (s.allows_zero_stage(stage)) return stage;
  }
  ADD_FAILURE() << "no ZeRO stage allowed";
  return 0;
}

// A plan that splits nothing: every framework runs it.
ParallelPlan single_gpu_plan(const PlannerSupport& s) {
  ParallelPlan p;
  p.zero_stage = lowest_zero_stage(s);
  return p;
}

// Whether the planner accepts `p`; a rejection must carry `tag`.
void expect_verdict(const FrameworkDescription& d, const ParallelPlan& p, bool allowed,
                    const std::string& tag) {
  const auto reason = unsupported_by_framework(d.framework, p);
  if (allowed) {
    EXPECT_EQ(reason, std::nullopt) << d.name << ": " << tag;
  } else {
    EXPECT_EQ(reason, tag) << d.name;
  }
}

TEST(FrameworkSupport, RejectsExactlyTheDimensionsTheDescriptionForbids) {
  for (const FrameworkDescription* d : all_frameworks()) {
    const PlannerSupport& s = d->planner_support;
    const ParallelPlan base = single_gpu_plan(s);
    expect_verdict(*d, base, true, "single GPU");
    ParallelPlan p = base;
    p.tp = 2;
    expect_verdict(*d, p, s.tp, "framework-no-tp");
    p = base;
    p.pp = 2;
    expect_verdict(*d, p, s.pp, "framework-no-pp");
    p = base;
    p.cp = 2;
    expect_verdict(*d, p, s.cp, "framework-no-cp");
    p = base;
    p.ep = 2;
    p.dp = 2;  // experts over the data-parallel ranks, sharded where the framework shards
    if (s.allows_zero_stage(3)) p.zero_stage = 3;
    expect_verdict(*d, p, s.ep, "framework-no-ep");
    p = base;
    p.sequence_parallel = true;
    expect_verdict(*d, p, s.sp, "framework-no-sp");
    p = base;
    p.vpp = 2;
    expect_verdict(*d, p, s.vpp, "framework-no-vpp");
    p = base;
    p.recompute = Recompute::Selective;
    expect_verdict(*d, p, s.selective_recompute, "framework-recompute");
    p.recompute = Recompute::Full;
    expect_verdict(*d, p, true, "full recompute");
  }
}

TEST(FrameworkSupport, RejectsExactlyTheZeroStagesAndSchedulesTheDescriptionForbids) {
  for (const FrameworkDescription* d : all_frameworks()) {
    const PlannerSupport& s = d->planner_support;
    ParallelPlan p = single_gpu_plan(s);
    for (int stage = 0; stage <= 3; ++stage) {
      p.zero_stage = stage;
      expect_verdict(*d, p, s.allows_zero_stage(stage), "framework-zero-stage");
    }
    if (!s.pp) continue;
    p = single_gpu_plan(s);
    p.pp = 2;
    for (ScheduleKind schedule :
         {ScheduleKind::Gpipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
          ScheduleKind::ZeroBubble, ScheduleKind::DualPipe}) {
      p.schedule = schedule;
      expect_verdict(*d, p, s.allows_schedule(schedule), "framework-schedule");
    }
  }
}

// DDP beside model parallelism: rejected exactly where the description says DDP runs only
// alone (torchtitan), and only with data parallelism to replicate over.
TEST(FrameworkSupport, DdpBesideModelParallelismOnlyWhereTheFrameworkRunsIt) {
  for (const FrameworkDescription* d : all_frameworks()) {
    const PlannerSupport& s = d->planner_support;
    if (!s.allows_zero_stage(0)) continue;
    ParallelPlan alone;
    alone.zero_stage = 0;
    alone.dp = 4;
    expect_verdict(*d, alone, true, "DDP alone");
    for (const auto& [dimension, supported] : {std::pair{&ParallelPlan::tp, s.tp},
                                               {&ParallelPlan::pp, s.pp},
                                               {&ParallelPlan::cp, s.cp}}) {
      if (!supported) continue;
      ParallelPlan p = alone;
      p.*dimension = 2;
      expect_verdict(*d, p, !s.ddp_only_alone, "framework-ddp-beside-model-parallelism");
      p.dp = 1;
      expect_verdict(*d, p, true, "no data parallelism to replicate over");
    }
  }
  EXPECT_TRUE(framework_info(Framework::Torchtitan).planner_support.ddp_only_alone);
}

// Expert parallelism outside FSDP's shard group x cp (x tp for experts without tensor
// parallelism): rejected where the framework takes experts from those ranks (torchtitan).
TEST(FrameworkSupport, ExpertParallelismOnlyOverTheShardedRanksWhereTheFrameworkSaysSo) {
  for (const FrameworkDescription* d : all_frameworks()) {
    const PlannerSupport& s = d->planner_support;
    if (!s.ep || !s.allows_zero_stage(3)) continue;
    ParallelPlan p;
    p.dp = 8;
    p.ep = 4;
    p.zero_stage = 3;
    EXPECT_EQ(PlannerSupport::expert_parallel_rank_pool(p), 8);
    expect_verdict(*d, p, true, "experts over the full shard group");
    p.zero_shard_size = 2;  // HSDP: shards of 2 replicated 4 times
    EXPECT_EQ(PlannerSupport::expert_parallel_rank_pool(p), 2);
    expect_verdict(*d, p, !s.ep_within_sharded_ranks, "framework-ep-outside-sharded-ranks");
    p.zero_shard_size = 4;
    expect_verdict(*d, p, true, "experts over a shard group of 4");
    // Replicated data parallelism (DDP) shards nothing to take experts from.
    if (s.allows_zero_stage(0)) {
      ParallelPlan ddp;
      ddp.zero_stage = 0;
      ddp.dp = 4;
      ddp.ep = 2;
      expect_verdict(*d, ddp, !s.ep_within_sharded_ranks, "framework-ep-outside-sharded-ranks");
    }
    // Experts without tensor parallelism take the tensor-parallel ranks too: 4 x 2.
    if (!s.tp) continue;
    p.zero_shard_size = 0;
    p.dp = 4;
    p.tp = 2;
    p.ep = 8;
    p.etp = 1;
    EXPECT_EQ(PlannerSupport::expert_parallel_rank_pool(p), 8);
    expect_verdict(*d, p, true, "ep 8 over dp 4 x tp 2");
    p.etp = 2;
    EXPECT_EQ(PlannerSupport::expert_parallel_rank_pool(p), 4);
    expect_verdict(*d, p, !s.ep_within_sharded_ranks, "framework-ep-outside-sharded-ranks");
  }
  EXPECT_TRUE(framework_info(Framework::Torchtitan).planner_support.ep_within_sharded_ranks);
}

// Expert tensor parallelism other than tp, or than 1 or tp with expert parallelism: rejected
// where the framework runs only those (torchtitan).
TEST(FrameworkSupport, ExpertTensorParallelismOfOneOrTpWhereTheFrameworkSaysSo) {
  for (const FrameworkDescription* d : all_frameworks()) {
    const PlannerSupport& s = d->planner_support;
    if (!s.ep || !s.tp || !s.allows_zero_stage(3)) continue;
    ParallelPlan p;
    p.dp = 4;
    p.tp = 4;
    p.ep = 4;
    p.zero_stage = 3;
    for (const int64_t etp : {1, 4}) {
      p.etp = etp;
      expect_verdict(*d, p, true, "etp 1 or tp");
    }
    p.etp = 2;
    expect_verdict(*d, p, !s.expert_tp_one_or_tp, "framework-expert-tp");
    // Named for the expert tensor parallelism even where ep also misses the rank pool.
    p.ep = 8;
    if (s.expert_tp_one_or_tp) expect_verdict(*d, p, false, "framework-expert-tp");
    // Without expert parallelism the experts run on the tensor-parallel ranks: etp tp only.
    p.ep = 1;
    p.etp = 4;
    expect_verdict(*d, p, true, "no expert parallelism, etp tp");
    for (const int64_t etp : {1, 2}) {
      p.etp = etp;
      expect_verdict(*d, p, !s.expert_tp_one_or_tp, "framework-expert-tp");
    }
  }
  EXPECT_TRUE(framework_info(Framework::Torchtitan).planner_support.expert_tp_one_or_tp);
}

TEST(FrameworkSupport, APlanUsingEverythingTheFrameworkSupportsPasses) {
  for (const FrameworkDescription* d : all_frameworks()) {
    const PlannerSupport& s = d->planner_support;
    ParallelPlan p;
    p.tp = s.tp ? 2 : 1;
    p.pp = s.pp ? 2 : 1;
    p.cp = s.cp ? 2 : 1;
    p.ep = s.ep ? 2 : 1;
    p.vpp = s.vpp && s.pp ? 2 : 1;
    p.sequence_parallel = s.sp;
    p.recompute = s.selective_recompute ? Recompute::Selective : Recompute::Full;
    for (int stage = 3; stage >= 0; --stage) {
      if (s.allows_zero_stage(stage)) {
        p.zero_stage = stage;
        break;
      }
    }
    p.schedule = p.vpp > 1 ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
    expect_verdict(*d, p, true, "everything supported");
  }
}

// A default the planner can never propose would make the planner's best plan differ from
// the plan the framework runs when the job leaves the key out.
TEST(FrameworkSupport, EveryFrameworksPlanDefaultsAreProposable) {
  TrainingSpec training;
  training.global_batch_size = 64;
  for (const FrameworkDescription* d : all_frameworks()) {
    const PlannerSupport& s = d->planner_support;
    for (int64_t tp : {int64_t{1}, int64_t{2}}) {
      for (int64_t pp : {int64_t{1}, int64_t{2}}) {
        if ((tp > 1 && !s.tp) || (pp > 1 && !s.pp)) continue;
        ParallelPlan p;
        p.tp = tp;
        p.pp = pp;
        apply_framework_plan_defaults(d->framework, p, training);
        EXPECT_EQ(unsupported_by_framework(d->framework, p), std::nullopt)
            << d->name << " tp " << tp << " pp " << pp;
      }
    }
  }
}

}  // namespace
}  // namespace parplan::planner
