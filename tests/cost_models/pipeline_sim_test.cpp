#include "cost_models/pipeline_sim.h"

#include <gtest/gtest.h>

#include <random>

namespace parplan::cost {
namespace {

PipelineInput uniform(ScheduleKind kind, int64_t pp, int64_t vpp, int64_t m, double f, double b) {
  PipelineInput in;
  in.shape = {kind, pp, vpp, m};
  for (int64_t s = 0; s < pp; ++s) {
    StageTimes st;
    st.forward.assign(vpp, f);
    st.backward.assign(vpp, b);
    st.backward_weight.assign(vpp, 0.5 * b);
    in.stages.push_back(st);
  }
  return in;
}

double bubble_fraction(const PipelineResult& r, int64_t stage) {
  return (r.makespan_s - r.busy_s[stage]) / r.makespan_s;
}

TEST(PipelineSim, OneFOneBBubbleMatchesClosedForm) {
  // Narayanan et al. 2021 §2.2.1: bubble time fraction (p-1)/(m+p-1) of the step.
  for (int64_t p : {2, 4, 8}) {
    for (int64_t m : {1, 4, 8, 32}) {
      const auto r = simulate_pipeline(uniform(ScheduleKind::OneFOneB, p, 1, m, 1.0, 2.0));
      const double expected = static_cast<double>(p - 1) / static_cast<double>(m + p - 1);
      EXPECT_NEAR(bubble_fraction(r, 0), expected, 1e-12) << "p=" << p << " m=" << m;
      EXPECT_NEAR(r.makespan_s, (m + p - 1) * 3.0, 1e-9);
    }
  }
}

TEST(PipelineSim, GpipeHasTheSameBubble) {
  const auto r = simulate_pipeline(uniform(ScheduleKind::Gpipe, 4, 1, 8, 1.0, 2.0));
  EXPECT_NEAR(bubble_fraction(r, 0), 3.0 / 11.0, 1e-12);
}

TEST(PipelineSim, InterleavedBubbleMatchesClosedForm) {
  // Narayanan et al. 2021 §2.2.2: with v model chunks per device the bubble shrinks to
  // (p-1)/(v*m + p-1) of the step (chunk times are 1/v of a stage's).
  for (int64_t p : {2, 4}) {
    for (int64_t v : {2, 3, 4}) {
      for (int64_t m : {p, 2 * p, 4 * p}) {
        const auto r =
            simulate_pipeline(uniform(ScheduleKind::Interleaved, p, v, m,
                                      1.0 / static_cast<double>(v), 2.0 / static_cast<double>(v)));
        const double expected = static_cast<double>(p - 1) / static_cast<double>(v * m + p - 1);
        EXPECT_NEAR(bubble_fraction(r, 0), expected, 1e-9) << "p=" << p << " v=" << v << " m=" << m;
      }
    }
  }
}

TEST(PipelineSim, NoPipelineNoBubble) {
  const auto r = simulate_pipeline(uniform(ScheduleKind::OneFOneB, 1, 1, 16, 1.0, 2.0));
  EXPECT_DOUBLE_EQ(r.makespan_s, 48.0);
  EXPECT_DOUBLE_EQ(r.busy_s[0], 48.0);
}

TEST(PipelineSim, SlowStageDominatesAndP2pAddsLatency) {
  auto in = uniform(ScheduleKind::OneFOneB, 4, 1, 16, 1.0, 2.0);
  in.stages[2].forward[0] = 2.0;
  in.stages[2].backward[0] = 4.0;
  const auto slow = simulate_pipeline(in);
  EXPECT_GE(slow.makespan_s, 16 * 6.0);
  in.p2p_s = 0.1;
  EXPECT_GT(simulate_pipeline(in).makespan_s, slow.makespan_s);
}

// GPipe on two stages, m micro-batches, forward f, backward b, transfer t. Overlapped
// transfers only delay the two hand-overs: m(f + b) + f + b + 2t. Blocking ones also hold
// the sender for t after each of its sends, so stage 0 paces the forwards at f + t and
// stage 1 the backwards at b + t: m(f + b + 2t) + f + b.
TEST(PipelineSim, BlockingSendsHoldTheSendingStage) {
  const double f = 1.0, b = 2.0, t = 0.25;
  for (int64_t m : {1, 4, 16}) {
    auto in = uniform(ScheduleKind::Gpipe, 2, 1, m, f, b);
    in.p2p_s = t;
    const double md = static_cast<double>(m);
    EXPECT_NEAR(simulate_pipeline(in).makespan_s, md * (f + b) + f + b + 2 * t, 1e-12);
    in.p2p_blocks_sender = true;
    const auto blocking = simulate_pipeline(in);
    EXPECT_NEAR(blocking.makespan_s, md * (f + b + 2 * t) + f + b, 1e-12) << "m=" << m;
    EXPECT_NEAR(blocking.busy_s[0], md * (f + b), 1e-12);  // sending is not compute
  }
  // One stage sends nothing.
  auto single = uniform(ScheduleKind::OneFOneB, 1, 1, 8, f, b);
  single.p2p_s = t;
  single.p2p_blocks_sender = true;
  EXPECT_DOUBLE_EQ(simulate_pipeline(single).makespan_s, 8 * (f + b));
}

TEST(PipelineSim, ZeroBubbleShrinksTheBubble) {
  const auto base = simulate_pipeline(uniform(ScheduleKind::OneFOneB, 4, 1, 8, 1.0, 2.0));
  const auto zb = simulate_pipeline(uniform(ScheduleKind::ZeroBubble, 4, 1, 8, 1.0, 2.0));
  EXPECT_LT(zb.makespan_s, base.makespan_s);
  // ZB-H1 (Qi et al. 2023 §3.1): bubble (p-1)(T_F + T_B - T_W) with B split into equal B, W.
  EXPECT_NEAR(zb.makespan_s, 8 * 3.0 + 3 * (1.0 + 1.0 - 1.0), 1e-9);
  EXPECT_NEAR(zb.busy_s[0], base.busy_s[0], 1e-12);
}

// Uneven stages can leave a slowly dying transient: the extrapolation is exact for uniform
// stages and within 0.1% of the full simulation otherwise.
TEST(PipelineSim, FastExtrapolationEqualsFullSimulation) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(0.7, 1.3);
  for (auto kind : {ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubble}) {
    for (int64_t p : {2, 4, 8}) {
      for (int64_t m : {64, 97, 256}) {
        const int64_t v = kind == ScheduleKind::Interleaved ? 3 : 1;
        if (v > 1 && m % p != 0) continue;  // interleaving needs m divisible by pp
        auto in = uniform(kind, p, v, m, 1.0, 2.0);
        for (auto& st : in.stages) {
          for (auto& f : st.forward) f *= jitter(rng);
          for (std::size_t c = 0; c < st.backward.size(); ++c) {
            st.backward[c] *= jitter(rng);
            st.backward_weight[c] = 0.4 * st.backward[c];
          }
        }
        in.p2p_s = 0.05;
        const auto full = simulate_pipeline(in);
        const auto fast = simulate_pipeline_fast(in);
        EXPECT_NEAR(fast.makespan_s, full.makespan_s, 1e-3 * full.makespan_s)
            << to_string(kind) << " p=" << p << " m=" << m;
        for (int64_t s = 0; s < p; ++s) {
          EXPECT_NEAR(fast.finish_s[s], full.finish_s[s], 1e-3 * full.makespan_s);
          EXPECT_NEAR(fast.busy_s[s], full.busy_s[s], 1e-9 * full.makespan_s);
        }
      }
    }
  }
}

TEST(PipelineSim, FastExtrapolationIsExactForUniformStages) {
  for (auto kind : {ScheduleKind::OneFOneB, ScheduleKind::Interleaved}) {
    const int64_t v = kind == ScheduleKind::Interleaved ? 2 : 1;
    auto in = uniform(kind, 8, v, 512, 1.0, 2.0);
    in.p2p_s = 0.01;
    EXPECT_NEAR(simulate_pipeline_fast(in).makespan_s, simulate_pipeline(in).makespan_s, 1e-9);
  }
}

}  // namespace
}  // namespace parplan::cost
