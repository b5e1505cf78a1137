#include "executor/p2p_plan.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "core/check.h"

namespace parplan::executor {

namespace {

// A forward of virtual stage v takes v's activation from the previous stage and sends v+1's
// to the next; a backward (or its input half) takes v's gradient from the next stage and
// sends v-1's to the previous. Weight gradients move nothing.
struct Neighbours {
  int64_t v, last, prev, next;
};

Neighbours neighbours(const PipeAction& a, const PipelineShape& shape, int64_t stage) {
  const int64_t pp = shape.pp;
  return {a.chunk * pp + stage, pp * shape.vpp - 1, (stage + pp - 1) % pp, (stage + 1) % pp};
}

bool is_backward(PipeOp op) { return op == PipeOp::Backward || op == PipeOp::BackwardInput; }

// A message as its sender and its receiver see it: (sender, receiver, micro-batch, virtual
// stage, gradient).
using MessageKey = std::tuple<int64_t, int64_t, int64_t, int64_t, bool>;

MessageKey key_of(const P2pMessage& m, int64_t stage) {
  return m.send ? MessageKey{stage, m.peer_stage, m.micro_batch, m.virtual_stage, m.gradient}
                : MessageKey{m.peer_stage, stage, m.micro_batch, m.virtual_stage, m.gradient};
}

// NCCL matches the k-th send from a to b with the k-th receive at b from a.
std::string check_issue_order(const std::vector<std::vector<std::vector<P2pMessage>>>& stages) {
  std::map<std::pair<int64_t, int64_t>, std::vector<MessageKey>> sends, receives;
  for (int64_t s = 0; s < static_cast<int64_t>(stages.size()); ++s) {
    for (const auto& group : stages[s]) {
      for (const P2pMessage& m : group) {
        const MessageKey key = key_of(m, s);
        (m.send ? sends : receives)[{std::get<0>(key), std::get<1>(key)}].push_back(key);
      }
    }
  }
  if (sends == receives) return "";
  for (const auto& [pair, list] : sends) {
    if (receives[pair] != list) {
      return "stages " + std::to_string(pair.first) + " -> " + std::to_string(pair.second) +
             " issue their sends and receives in different orders";
    }
  }
  return "a receive without its send";
}

}  // namespace

std::optional<P2pMessage> action_input(const PipeAction& a, const PipelineShape& shape,
                                       int64_t stage) {
  const Neighbours n = neighbours(a, shape, stage);
  if (a.op == PipeOp::Forward && n.v > 0) {
    return P2pMessage{false, n.prev, a.micro_batch, n.v, false};
  }
  if (is_backward(a.op) && n.v < n.last) {
    return P2pMessage{false, n.next, a.micro_batch, n.v, true};
  }
  return std::nullopt;
}

std::optional<P2pMessage> action_output(const PipeAction& a, const PipelineShape& shape,
                                        int64_t stage) {
  const Neighbours n = neighbours(a, shape, stage);
  if (a.op == PipeOp::Forward && n.v < n.last) {
    return P2pMessage{true, n.next, a.micro_batch, n.v + 1, false};
  }
  if (is_backward(a.op) && n.v > 0) {
    return P2pMessage{true, n.prev, a.micro_batch, n.v - 1, true};
  }
  return std::nullopt;
}

std::vector<P2pGroup> plan_transfers(const PipelineShape& shape, int64_t stage,
                                     P2pPairing pairing) {
  const std::vector<PipeAction> actions = stage_schedule(shape, stage);
  const int64_t n = static_cast<int64_t>(actions.size());
  std::vector<P2pGroup> groups;
  if (pairing == P2pPairing::Unpaired) {
    for (int64_t i = 0; i < n; ++i) {
      if (auto in = action_input(actions[i], shape, stage)) groups.push_back({i, {*in}});
      if (auto out = action_output(actions[i], shape, stage)) groups.push_back({i + 1, {*out}});
    }
    return groups;
  }
  // A group starts before each action, except before the backward of an interleaved
  // steady-state unit (the forward after the warm-up's and the backward after it). It holds
  // the outputs computed since the previous group, then the inputs up to the next group.
  const int64_t warmup = warmup_forwards(shape, stage);
  const int64_t units = shape.kind == ScheduleKind::Interleaved ? n / 2 - warmup : 0;
  auto unit_continues = [&](int64_t i) {
    const int64_t k = i - warmup;
    return k >= 1 && k < 2 * units && k % 2 == 1;
  };
  int64_t produced_from = 0;  // first action whose output is not yet in a group
  for (int64_t i = 0; i <= n; ++i) {
    if (i > 0 && unit_continues(i)) continue;
    P2pGroup group{i, {}};
    for (int64_t j = produced_from; j < i; ++j) {
      if (auto out = action_output(actions[j], shape, stage)) group.messages.push_back(*out);
    }
    produced_from = i;
    for (int64_t j = i; j < n && (j == i || unit_continues(j)); ++j) {
      if (auto in = action_input(actions[j], shape, stage)) group.messages.push_back(*in);
    }
    if (!group.messages.empty()) groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<std::vector<P2pMessage>> issue_groups(const std::vector<P2pGroup>& groups) {
  std::vector<std::vector<P2pMessage>> out;
  for (const P2pGroup& g : groups) out.push_back(g.messages);
  return out;
}

std::string find_p2p_deadlock(const std::vector<std::vector<std::vector<P2pMessage>>>& stages) {
  const std::string order = check_issue_order(stages);
  if (!order.empty()) return order;
  const std::size_t n = stages.size();
  std::vector<std::size_t> running(n, 0);  // index of each stage's running group
  auto in_running = [&](int64_t stage, const MessageKey& key, bool send) {
    if (running[stage] >= stages[stage].size()) return false;
    for (const P2pMessage& m : stages[stage][running[stage]]) {
      if (m.send == send && key_of(m, stage) == key) return true;
    }
    return false;
  };
  std::set<MessageKey> matched;  // transfers whose send and receive have both run
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < n; ++s) {
      if (running[s] >= stages[s].size()) continue;
      for (const P2pMessage& m : stages[s][running[s]]) {
        const MessageKey key = key_of(m, static_cast<int64_t>(s));
        if (in_running(m.peer_stage, key, !m.send)) matched.insert(key);
      }
    }
    for (std::size_t s = 0; s < n; ++s) {
      if (running[s] >= stages[s].size()) continue;
      bool complete = true;
      for (const P2pMessage& m : stages[s][running[s]]) {
        complete = complete && matched.count(key_of(m, static_cast<int64_t>(s))) > 0;
      }
      if (complete) {
        ++running[s];
        progress = true;
      }
    }
  }
  std::string stuck;
  for (std::size_t s = 0; s < n; ++s) {
    if (running[s] >= stages[s].size()) continue;
    stuck +=
        (stuck.empty() ? "" : "; ") + std::string("stage ") + std::to_string(s) + " waits in {";
    const auto& group = stages[s][running[s]];
    for (std::size_t i = 0; i < group.size(); ++i) {
      stuck += (i ? ", " : "") + to_string(group[i]);
    }
    stuck += "}";
  }
  return stuck;
}

std::string to_string(const P2pMessage& m) {
  return std::string(m.send ? "send " : "recv ") + (m.gradient ? "grad" : "act") + " mb " +
         std::to_string(m.micro_batch) + " v " + std::to_string(m.virtual_stage) +
         (m.send ? " to " : " from ") + std::to_string(m.peer_stage);
}

}  // namespace parplan::executor
