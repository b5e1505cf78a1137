// executor/p2p_plan: which transfers the pipeline runner groups, and every schedule replayed
// under NCCL's point-to-point rules. The transfers as the runner issued them before issue 23
// (each alone, sends right after their compute) deadlock 1F1B, interleaved and zero-bubble;
// grouped as Megatron does, no schedule does, at pp 2-8. (Pairing only each output with the
// next input, as 1F1B does, still deadlocks the interleaved schedule: this replay found it.)
#include "executor/p2p_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace parplan::executor {
namespace {

using Groups = std::vector<std::vector<P2pMessage>>;

std::string replay(const PipelineShape& shape, P2pPairing pairing) {
  std::vector<Groups> stages;
  for (int64_t s = 0; s < shape.pp; ++s) {
    stages.push_back(issue_groups(plan_transfers(shape, s, pairing)));
  }
  return find_p2p_deadlock(stages);
}

P2pMessage send(int64_t peer, int64_t mb, int64_t v, bool grad) {
  return {true, peer, mb, v, grad};
}
P2pMessage recv(int64_t peer, int64_t mb, int64_t v, bool grad) {
  return {false, peer, mb, v, grad};
}

TEST(P2pRules, CrossedSendsDeadlockAloneAndCompleteInOneGroup) {
  // Stage 0 sends activation 1 and receives gradient 0; stage 1 the reverse (1F1B, pp = 2).
  const Groups alone0 = {{send(1, 1, 1, false)}, {recv(1, 0, 0, true)}};
  const Groups alone1 = {{send(0, 0, 0, true)}, {recv(0, 1, 1, false)}};
  const std::string stuck = find_p2p_deadlock({alone0, alone1});
  EXPECT_NE(stuck.find("stage 0 waits in {send act mb 1 v 1 to 1}"), std::string::npos) << stuck;
  EXPECT_NE(stuck.find("stage 1 waits in {send grad mb 0 v 0 to 0}"), std::string::npos) << stuck;
  const Groups paired0 = {{send(1, 1, 1, false), recv(1, 0, 0, true)}};
  const Groups paired1 = {{send(0, 0, 0, true), recv(0, 1, 1, false)}};
  EXPECT_EQ(find_p2p_deadlock({paired0, paired1}), "");
  // A send whose receive is queued behind a group that waits on the sender.
  EXPECT_NE(find_p2p_deadlock({{{send(1, 0, 1, false)}}, {}}), "");
}

TEST(P2pRules, ReportsSendsAndReceivesIssuedInDifferentOrders) {
  const Groups s0 = {{send(1, 0, 1, false)}, {send(1, 1, 1, false)}};
  const Groups s1 = {{recv(0, 1, 1, false), recv(0, 0, 1, false)}};
  EXPECT_NE(find_p2p_deadlock({s0, s1}).find("different orders"), std::string::npos);
}

using Messages = std::vector<P2pMessage>;

TEST(P2pPlan, OneFOneBPairsEachOutputWithTheNextInput) {
  const PipelineShape shape{ScheduleKind::OneFOneB, 2, 1, 4};
  // Stage 0: F0 F1 B0 F2 B1 F3 B2 B3.
  const auto t = plan_transfers(shape, 0);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].before_action, 1);  // F1 receives nothing: act 0 starts alone
  EXPECT_EQ(t[0].messages, Messages{send(1, 0, 1, false)});
  EXPECT_EQ(t[1].before_action, 2);
  EXPECT_EQ(t[1].messages, (Messages{send(1, 1, 1, false), recv(1, 0, 0, true)}));
  EXPECT_EQ(t[2].before_action, 4);
  EXPECT_EQ(t[2].messages, (Messages{send(1, 2, 1, false), recv(1, 1, 0, true)}));
  EXPECT_EQ(t[4].before_action, 7);
  EXPECT_EQ(t[4].messages, Messages{recv(1, 3, 0, true)});
  // Stage 1: F0 B0 F1 B1 ...: B0's gradient starts with F1's input.
  const auto u = plan_transfers(shape, 1);
  EXPECT_EQ(u[0].before_action, 0);
  EXPECT_EQ(u[0].messages, Messages{recv(0, 0, 1, false)});
  EXPECT_EQ(u[1].before_action, 2);
  EXPECT_EQ(u[1].messages, (Messages{send(0, 0, 0, true), recv(0, 1, 1, false)}));
  EXPECT_EQ(u.back().before_action, 8);  // after the last action
  EXPECT_EQ(u.back().messages, Messages{send(0, 3, 0, true)});
  // Unpaired: every transfer alone, each output right after its compute.
  const auto old = plan_transfers(shape, 0, P2pPairing::Unpaired);
  ASSERT_EQ(old.size(), 8u);
  EXPECT_EQ(old[1].messages, Messages{send(1, 1, 1, false)});
  EXPECT_EQ(old[2].messages, Messages{recv(1, 0, 0, true)});
}

TEST(P2pPlan, InterleavedStartsBothInputsOfAForwardBackwardUnitTogether) {
  const PipelineShape shape{ScheduleKind::Interleaved, 2, 2, 4};
  const std::vector<PipeAction> actions = stage_schedule(shape, 0);
  int units = 0;
  for (const P2pGroup& g : plan_transfers(shape, 0)) {
    const int64_t i = g.before_action;
    if (i == 0 || i >= static_cast<int64_t>(actions.size())) continue;
    // No group starts between a forward and the backward after it.
    EXPECT_FALSE(actions[i].op == PipeOp::Backward && actions[i - 1].op == PipeOp::Forward) << i;
    if (actions[i].op != PipeOp::Forward || actions[i + 1].op != PipeOp::Backward) continue;
    ++units;
    int receives = 0;
    for (const P2pMessage& m : g.messages) receives += m.send ? 0 : 1;
    // Stage 0's chunk 0 forwards take no input; every other unit receives two.
    EXPECT_EQ(receives, actions[i].chunk == 0 ? 1 : 2) << i;
  }
  EXPECT_GT(units, 0);
}

TEST(P2pPlan, UnpairedTransfersDeadlockOneFOneBAndInterleaved) {
  // What the runner issued before pairing: fine over MPI, a hang over NCCL.
  for (int64_t pp = 2; pp <= 4; ++pp) {
    for (int64_t m : {pp, 2 * pp}) {
      EXPECT_NE(replay({ScheduleKind::OneFOneB, pp, 1, m}, P2pPairing::Unpaired), "")
          << "1f1b pp " << pp << " m " << m;
      EXPECT_NE(replay({ScheduleKind::Interleaved, pp, 2, m}, P2pPairing::Unpaired), "")
          << "interleaved pp " << pp << " m " << m;
      EXPECT_NE(replay({ScheduleKind::ZeroBubble, pp, 1, m}, P2pPairing::Unpaired), "")
          << "zero-bubble pp " << pp << " m " << m;
      // GPipe has no steady state: all forwards, then all backwards, no crossed pair.
      EXPECT_EQ(replay({ScheduleKind::Gpipe, pp, 1, m}, P2pPairing::Unpaired), "")
          << "gpipe pp " << pp << " m " << m;
    }
  }
}

TEST(P2pPlan, PairedTransfersOfEveryScheduleKeepToNcclsRules) {
  int checked = 0;
  for (ScheduleKind kind : {ScheduleKind::Gpipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                            ScheduleKind::ZeroBubble, ScheduleKind::DualPipe}) {
    for (int64_t pp = 2; pp <= 8; ++pp) {
      for (int64_t vpp : {1, 2, 3}) {
        if (vpp > 1 && kind != ScheduleKind::Interleaved) continue;
        for (int64_t m : {int64_t{1}, pp - 1, pp, pp + 1, 2 * pp, 3 * pp + 2}) {
          if (m < 1 || (kind == ScheduleKind::Interleaved && m % pp != 0)) continue;
          const PipelineShape shape{kind, pp, vpp, m};
          EXPECT_EQ(replay(shape, P2pPairing::Paired), "")
              << to_string(kind) << " pp " << pp << " vpp " << vpp << " m " << m;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(P2pPlan, InterleavedNeedsAMultipleOfPpMicroBatches) {
  // Megatron's old requirement: with a partial last group of micro-batches, even its groups
  // deadlock (and at pp = 2 the two directions' orders differ, which NCCL, matching by order,
  // would not notice). Jobs cannot ask for it (core/parallel_plan.cpp's check of plan.vpp).
  for (int64_t pp = 2; pp <= 6; ++pp) {
    for (int64_t m : {pp + 1, 2 * pp + 1}) {
      const PipelineShape shape{ScheduleKind::Interleaved, pp, 2, m};
      EXPECT_NE(replay(shape, P2pPairing::Paired), "") << "pp " << pp << " m " << m;
    }
  }
}

}  // namespace
}  // namespace parplan::executor
