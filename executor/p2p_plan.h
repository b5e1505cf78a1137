// The pipeline's point-to-point transfers as data, and NCCL's rules for them. NCCL runs the
// operations of one communicator in issue order, a send completes only when its receive is
// running on the peer (past NCCL's buffers), and calls between ncclGroupStart/End progress
// together (nccl.h; Megatron-Core's p2p_communication.py pairs them with
// batch_isend_irecv). plan_transfers lists a stage's transfers (core/schedule.h's action
// list) as the groups it starts, each before the compute of one action; find_p2p_deadlock replays
// every stage's groups under NCCL's rules. The pipeline runner executes plan_transfers;
// StrictP2pComm (executor/strict_p2p_comm.h) enforces the same rules on real messages. Tested in
// tests/executor/p2p_plan_test.cpp (every schedule, pp 2-8).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule.h"

namespace parplan::executor {

struct P2pMessage {
  bool send = true;  // else a receive
  int64_t peer_stage = 0;
  int64_t micro_batch = 0;
  int64_t virtual_stage = 0;  // the receiving virtual stage
  bool gradient = false;      // a backward gradient, else a forward activation
  bool operator==(const P2pMessage&) const = default;
};

// One group of transfers, started together just before the compute of action
// `before_action` (= the number of actions: after the last one).
struct P2pGroup {
  int64_t before_action = 0;
  std::vector<P2pMessage> messages;
};

enum class P2pPairing {
  Paired,    // Megatron-Core's groups (the runner)
  Unpaired,  // every transfer alone, outputs right after their compute (before issue 23)
};

// What action `a` of `stage` receives before its compute and sends after it, if anything.
std::optional<P2pMessage> action_input(const PipeAction& a, const PipelineShape& shape,
                                       int64_t stage);
std::optional<P2pMessage> action_output(const PipeAction& a, const PipelineShape& shape,
                                        int64_t stage);

// The transfers of stage_schedule(shape, stage) in issue order. Paired, as Megatron-Core's
// schedules.py does: one action's output starts in one group with the next action's input
// (send_forward_recv_backward, send_backward_recv_forward), or alone when that receives
// nothing; in the interleaved schedule a steady-state forward and the backward after it form
// one unit, and the group before each unit holds the outputs of the previous one and the
// inputs of both (send_forward_backward_recv_forward_backward).
std::vector<P2pGroup> plan_transfers(const PipelineShape& shape, int64_t stage,
                                     P2pPairing pairing = P2pPairing::Paired);

// The messages of each group, in order.
std::vector<std::vector<P2pMessage>> issue_groups(const std::vector<P2pGroup>& groups);

// Replays every stage's groups (index = stage) under NCCL's rules with no buffering: a stage
// runs its groups in order; a group completes when each of its sends meets its receive in the
// peer's running group and each receive its send. Returns "" when every group completes,
// else what is stuck (the first running group of each unfinished stage). Also reports a pair
// of stages whose sends and receives are not issued in the same order (NCCL matches by order).
std::string find_p2p_deadlock(const std::vector<std::vector<std::vector<P2pMessage>>>& stages);

std::string to_string(const P2pMessage& m);

}  // namespace parplan::executor
