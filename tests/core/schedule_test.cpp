#include "core/schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

namespace parplan {
namespace {

// Executes the per-stage lists in order, one action per stage per round when its inputs are
// ready; returns false on deadlock. Forward of virtual stage v needs forward of v-1; backward
// of v needs backward of v+1 and forward of v.
bool runs_without_deadlock(const PipelineShape& shape) {
  const auto lists = pipeline_schedule(shape);
  const int64_t stages = shape.pp * shape.vpp;
  std::set<std::tuple<int, int64_t, int64_t>> done;  // (op, mb, virtual stage)
  std::vector<std::size_t> next(shape.pp, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t s = 0; s < shape.pp; ++s) {
      if (next[s] >= lists[s].size()) continue;
      const PipeAction a = lists[s][next[s]];
      const int64_t v = a.chunk * shape.pp + s;
      bool ready = true;
      if (a.op == PipeOp::Forward) {
        ready = v == 0 || done.count({0, a.micro_batch, v - 1});
      } else if (a.op == PipeOp::BackwardWeight) {
        ready = done.count({1, a.micro_batch, v});
      } else {
        ready = done.count({0, a.micro_batch, v}) &&
                (v == stages - 1 || done.count({1, a.micro_batch, v + 1}));
      }
      if (!ready) continue;
      const int kind = a.op == PipeOp::Forward ? 0 : a.op == PipeOp::BackwardWeight ? 2 : 1;
      done.insert({kind, a.micro_batch, v});
      ++next[s];
      progress = true;
    }
  }
  for (int64_t s = 0; s < shape.pp; ++s) {
    if (next[s] != lists[s].size()) return false;
  }
  return true;
}

TEST(Schedule, APlansPipelineHasItsMicroBatchesPerStep) {
  ParallelPlan plan;
  plan.schedule = ScheduleKind::Interleaved;
  plan.pp = 4;
  plan.vpp = 3;
  plan.dp = 8;
  plan.micro_batch_size = 2;
  const PipelineShape shape = pipeline_shape(plan, 1024);
  EXPECT_EQ(shape.kind, ScheduleKind::Interleaved);
  EXPECT_EQ(shape.pp, 4);
  EXPECT_EQ(shape.vpp, 3);
  EXPECT_EQ(shape.num_micro_batches, 1024 / (8 * 2));
}

TEST(Schedule, EveryActionExactlyOnceAndDeadlockFree) {
  for (auto kind : {ScheduleKind::Gpipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                    ScheduleKind::ZeroBubble}) {
    for (int64_t pp : {1, 2, 3, 4, 8}) {
      for (int64_t m : {1, 2, 4, 7, 8, 16}) {
        for (int64_t vpp : {1, 2, 3}) {
          if (kind != ScheduleKind::Interleaved && vpp > 1) continue;
          if (kind == ScheduleKind::Interleaved && vpp > 1 && m % pp != 0) continue;  // plan rule
          const PipelineShape shape{kind, pp, vpp, m};
          for (int64_t s = 0; s < pp; ++s) {
            std::map<std::tuple<int, int64_t, int64_t>, int> count;
            for (const auto& a : stage_schedule(shape, s))
              ++count[{static_cast<int>(a.op), a.micro_batch, a.chunk}];
            const int64_t per_op = m * vpp;
            int64_t forwards = 0;
            for (const auto& [key, n] : count) {
              EXPECT_EQ(n, 1);
              if (std::get<0>(key) == static_cast<int>(PipeOp::Forward)) ++forwards;
            }
            EXPECT_EQ(forwards, per_op);
          }
          EXPECT_TRUE(runs_without_deadlock(shape))
              << to_string(kind) << " pp=" << pp << " m=" << m << " vpp=" << vpp;
        }
      }
    }
  }
}

TEST(Schedule, MegatronWarmupCounts) {
  // 1F1B: pp - stage - 1 (capped by m).
  EXPECT_EQ(warmup_forwards({ScheduleKind::OneFOneB, 4, 1, 8}, 0), 3);
  EXPECT_EQ(warmup_forwards({ScheduleKind::OneFOneB, 4, 1, 8}, 3), 0);
  EXPECT_EQ(warmup_forwards({ScheduleKind::OneFOneB, 8, 1, 2}, 0), 2);
  // Interleaved: (pp - rank - 1) * 2 + (vpp - 1) * pp.
  EXPECT_EQ(warmup_forwards({ScheduleKind::Interleaved, 4, 2, 8}, 0), 10);
  EXPECT_EQ(warmup_forwards({ScheduleKind::Interleaved, 4, 2, 8}, 3), 4);
}

TEST(Schedule, PeakInFlightMatchesKorthikanti) {
  // 1F1B: stage i holds pp - i micro-batches; GPipe holds all m.
  for (int64_t s = 0; s < 4; ++s) {
    EXPECT_EQ(peak_in_flight_chunks({ScheduleKind::OneFOneB, 4, 1, 16}, s), 4 - s);
    EXPECT_EQ(peak_in_flight_chunks({ScheduleKind::Gpipe, 4, 1, 16}, s), 16);
  }
  // Interleaved first stage: pp*(vpp+1) - 1 chunks, i.e. activations of L(1 + (p-1)/(p v)).
  EXPECT_EQ(peak_in_flight_chunks({ScheduleKind::Interleaved, 4, 2, 16}, 0), 11);
}

// Oracle for the closed form: walk the action list (+1 per forward, -1 per backward).
int64_t walk_peak(const PipelineShape& shape, int64_t stage) {
  int64_t live = 0, peak = 0;
  for (const auto& a : stage_schedule(shape, stage)) {
    if (a.op == PipeOp::Forward) peak = std::max(peak, ++live);
    if (a.op == PipeOp::Backward || a.op == PipeOp::BackwardInput) --live;
  }
  return peak;
}

TEST(Schedule, PeakInFlightClosedFormMatchesTheWalk) {
  for (auto kind : {ScheduleKind::Gpipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                    ScheduleKind::ZeroBubble}) {
    for (int64_t pp : {1, 2, 4, 8}) {
      for (int64_t m : {1, 2, 8, 16, 32}) {
        for (int64_t vpp : {1, 2, 4}) {
          if ((kind != ScheduleKind::Interleaved && vpp > 1) || (vpp > 1 && m % pp != 0)) continue;
          const PipelineShape shape{kind, pp, vpp, m};
          for (int64_t s = 0; s < pp; ++s) {
            EXPECT_EQ(peak_in_flight_chunks(shape, s), walk_peak(shape, s))
                << to_string(kind) << " pp=" << pp << " m=" << m << " vpp=" << vpp << " s=" << s;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace parplan
