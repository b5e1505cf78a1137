#include "cost_models/pipeline_sim.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/check.h"

namespace parplan::cost {

namespace {

constexpr int64_t kExactSingleStageMicroBatches = 4096;

// The actions of a shape in one global order in which every action comes after the actions
// it waits for, cached per thread: the planner simulates many plans of the same shape.
// Whether an action can run depends only on which actions have completed, never on their
// durations, so the order of a round-robin over the stages (each stage runs its list from
// core/schedule.h until it meets an action whose input is not there yet) is fixed per shape
// and the simulation is one pass over it. Completion times live in one array: forwards of
// (virtual stage v, micro-batch b) at v*m + b, backwards (input part) at V*m + v*m + b.
enum ActionFlags : uint32_t {
  kP2pA = 1,          // wait_a arrives from another stage: add the transfer time
  kP2pB = 2,          // likewise wait_b
  kLastBackward = 4,  // the last backward (input part) of its stage and chunk
  kLastOfChunk = 8,   // the last backward or weight-gradient action of its stage and chunk
};

struct OrderedAction {
  int32_t stage;
  int32_t wait_a;    // completion time this action waits for, or -1
  int32_t wait_b;    // a second one, or -1
  int32_t done;      // completion time this action sets, or -1 (weight gradients)
  int32_t duration;  // index into the per-(stage, chunk, kind) durations
  uint32_t flags;
};

struct ActionLabel {  // what the trace and the last-backward marks need
  PipeOp op;
  int32_t chunk;
  int32_t micro_batch;
};

struct OrderedSchedule {
  std::vector<OrderedAction> actions;
  std::vector<ActionLabel> labels;
};

enum DurationKind : int32_t { kForward = 0, kBackwardInput = 1, kBackwardWeight = 2 };

OrderedSchedule build_ordered_schedule(const PipelineShape& shape) {
  const int64_t m = shape.num_micro_batches;
  const int64_t virtual_stages = shape.pp * shape.vpp;
  const int64_t backward_base = virtual_stages * m;
  std::vector<std::vector<OrderedAction>> per_stage(shape.pp);
  std::vector<std::vector<ActionLabel>> per_stage_labels(shape.pp);
  for (int64_t s = 0; s < shape.pp; ++s) {
    std::vector<int64_t> last_backward(shape.vpp, -1), last_of_chunk(shape.vpp, -1);
    for (const PipeAction& a : stage_schedule(shape, s)) {
      const int64_t v = a.chunk * shape.pp + s;
      const int64_t slot = v * m + a.micro_batch;
      OrderedAction f{static_cast<int32_t>(s), -1, -1, -1, 0, 0};
      const auto duration = [&](DurationKind kind) {
        return static_cast<int32_t>((s * shape.vpp + a.chunk) * 3 + kind);
      };
      const int64_t index = static_cast<int64_t>(per_stage[s].size());
      if (a.op == PipeOp::Forward) {
        if (v > 0) {  // activations from the previous virtual stage
          f.wait_a = static_cast<int32_t>(slot - m);
          f.flags |= kP2pA;
        }
        f.done = static_cast<int32_t>(slot);
        f.duration = duration(kForward);
      } else if (a.op == PipeOp::BackwardWeight) {
        f.wait_a = static_cast<int32_t>(backward_base + slot);
        f.duration = duration(kBackwardWeight);
        last_of_chunk[a.chunk] = index;
      } else {
        f.wait_a = static_cast<int32_t>(slot);  // its own forward
        if (v < virtual_stages - 1) {           // gradients from the next virtual stage
          f.wait_b = static_cast<int32_t>(backward_base + slot + m);
          f.flags |= kP2pB;
        }
        f.done = static_cast<int32_t>(backward_base + slot);
        f.duration = duration(kBackwardInput);
        last_backward[a.chunk] = index;
        last_of_chunk[a.chunk] = index;
      }
      per_stage[s].push_back(f);
      per_stage_labels[s].push_back(
          {a.op, static_cast<int32_t>(a.chunk), static_cast<int32_t>(a.micro_batch)});
    }
    for (int64_t c = 0; c < shape.vpp; ++c) {
      if (last_backward[c] >= 0) per_stage[s][last_backward[c]].flags |= kLastBackward;
      if (last_of_chunk[c] >= 0) per_stage[s][last_of_chunk[c]].flags |= kLastOfChunk;
    }
  }

  // The round-robin order.
  OrderedSchedule out;
  std::size_t remaining = 0;
  for (const auto& list : per_stage) remaining += list.size();
  out.actions.reserve(remaining);
  out.labels.reserve(remaining);
  std::vector<char> complete(static_cast<std::size_t>(2 * backward_base), 0);
  std::vector<std::size_t> next(shape.pp, 0);
  while (remaining > 0) {
    bool progress = false;
    for (int64_t s = 0; s < shape.pp; ++s) {
      const auto& list = per_stage[s];
      std::size_t& i = next[s];
      while (i < list.size()) {
        const OrderedAction& a = list[i];
        if (a.wait_a >= 0 && !complete[a.wait_a]) break;
        if (a.wait_b >= 0 && !complete[a.wait_b]) break;
        if (a.done >= 0) complete[a.done] = 1;
        out.actions.push_back(a);
        out.labels.push_back(per_stage_labels[s][i]);
        ++i;
        --remaining;
        progress = true;
      }
    }
    PARPLAN_ASSERT(progress);  // the schedules are deadlock-free (tests/core/schedule_test.cpp)
  }
  return out;
}

const OrderedSchedule& ordered_schedule(const PipelineShape& shape) {
  using Key = std::tuple<int, int64_t, int64_t, int64_t>;
  thread_local std::map<Key, OrderedSchedule> cache;
  const Key key{static_cast<int>(shape.kind), shape.pp, shape.vpp, shape.num_micro_batches};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();
  return cache.emplace(key, build_ordered_schedule(shape)).first->second;
}

}  // namespace

PipelineResult simulate_pipeline(const PipelineInput& in) {
  const PipelineShape& shape = in.shape;
  const int64_t pp = shape.pp;
  const int64_t vpp = shape.vpp;
  const int64_t m = shape.num_micro_batches;
  const int64_t virtual_stages = pp * vpp;
  PARPLAN_ASSERT(static_cast<int64_t>(in.stages.size()) == pp);

  const OrderedSchedule& order = ordered_schedule(shape);
  std::vector<double> done(static_cast<std::size_t>(2 * virtual_stages * m));

  PipelineResult result;
  result.busy_s.assign(pp, 0.0);
  result.finish_s.assign(pp, 0.0);
  result.last_backward_start_s.assign(pp, std::vector<double>(vpp, 0.0));
  result.last_backward_end_s.assign(pp, std::vector<double>(vpp, 0.0));
  const bool split_backward =
      shape.kind == ScheduleKind::ZeroBubble || shape.kind == ScheduleKind::DualPipe;
  // Forward, backward (input part) and weight-gradient durations per stage and chunk.
  std::vector<double> durations(static_cast<std::size_t>(pp * vpp * 3));
  for (int64_t s = 0; s < pp; ++s) {
    for (int64_t c = 0; c < vpp; ++c) {
      const StageTimes& t = in.stages[s];
      const double w = t.backward_weight.empty() ? 0.0 : t.backward_weight[c];
      double* d = &durations[static_cast<std::size_t>((s * vpp + c) * 3)];
      d[kForward] = t.forward[c];
      d[kBackwardInput] = split_backward ? t.backward[c] - w : t.backward[c];
      d[kBackwardWeight] = w;
    }
  }

  // Per duration slot: the time the stage itself spends sending after the action (blocking
  // point-to-point). Every forward sends on except the last virtual stage's, every backward
  // except the first's; weight-gradient work sends nothing.
  std::vector<double> send_s;  // empty: no blocking sends
  const bool virtual_stage_order = shape.kind == ScheduleKind::OneFOneB ||
                                   shape.kind == ScheduleKind::Interleaved ||
                                   shape.kind == ScheduleKind::Gpipe;
  if (in.p2p_blocks_sender && virtual_stage_order && pp > 1) {
    send_s.assign(durations.size(), 0.0);
    for (int64_t s = 0; s < pp; ++s) {
      for (int64_t c = 0; c < vpp; ++c) {
        const int64_t virtual_stage = c * pp + s;
        double* d = &send_s[static_cast<std::size_t>((s * vpp + c) * 3)];
        if (virtual_stage < virtual_stages - 1) d[kForward] = in.p2p_s;
        if (virtual_stage > 0) d[kBackwardInput] = in.p2p_s;
      }
    }
  }

  std::vector<double>& free_at = result.finish_s;
  std::vector<double>& busy = result.busy_s;
  const double p2p = in.p2p_s;
  const std::size_t n = order.actions.size();
  for (std::size_t i = 0; i < n; ++i) {
    const OrderedAction& a = order.actions[i];
    // Every awaited completion precedes this action in the order.
    double ready = 0.0;
    if (a.wait_a >= 0) ready = done[a.wait_a] + ((a.flags & kP2pA) ? p2p : 0.0);
    if (a.wait_b >= 0) ready = std::max(ready, done[a.wait_b] + ((a.flags & kP2pB) ? p2p : 0.0));
    const double duration = durations[a.duration];
    const double start = std::max(free_at[a.stage], ready);
    const double end = start + duration;
    free_at[a.stage] = send_s.empty() ? end : end + send_s[a.duration];
    busy[a.stage] += duration;
    if (a.done >= 0) done[a.done] = end;
    if (a.flags & (kLastBackward | kLastOfChunk)) {
      const int32_t chunk = order.labels[i].chunk;
      if (a.flags & kLastBackward) result.last_backward_start_s[a.stage][chunk] = start;
      if (a.flags & kLastOfChunk) result.last_backward_end_s[a.stage][chunk] = end;
    }
    if (in.record_events) {
      const ActionLabel& l = order.labels[i];
      result.events.push_back({a.stage, l.op, l.micro_batch, l.chunk, start, end});
    }
  }
  for (int64_t s = 0; s < pp; ++s) result.makespan_s = std::max(result.makespan_s, free_at[s]);
  return result;
}

PipelineResult simulate_pipeline_fast(const PipelineInput& in) {
  const int64_t pp = in.shape.pp;
  const int64_t m = in.shape.num_micro_batches;
  // Steady state begins after the longest warm-up (interleaved stage 0: 2(pp-1) + (vpp-1)pp
  // virtual micro-batches), with margin for the transient of uneven stages to die out.
  const int64_t step = pp;
  const int64_t base = ((2 * pp * in.shape.vpp + 2 * pp) / step + 1) * step + m % step;
  // One stage runs its micro-batches back to back, so extrapolation is exact there too; it is
  // simulated in full up to kExactSingleStageMicroBatches (a global batch of 10^9 sequences
  // must not allocate and walk 10^9 slots).
  if (in.record_events || m <= base + step || (pp == 1 && m <= kExactSingleStageMicroBatches)) {
    return simulate_pipeline(in);
  }
  PipelineInput small = in;
  small.shape.num_micro_batches = base;
  const PipelineResult a = simulate_pipeline(small);
  small.shape.num_micro_batches = base + step;
  const PipelineResult b = simulate_pipeline(small);
  const double periods = static_cast<double>(m - base) / static_cast<double>(step);
  auto extend = [periods](double x, double y) { return x + (y - x) * periods; };
  PipelineResult out = b;
  out.makespan_s = extend(a.makespan_s, b.makespan_s);
  for (int64_t s = 0; s < pp; ++s) {
    out.busy_s[s] = extend(a.busy_s[s], b.busy_s[s]);
    out.finish_s[s] = extend(a.finish_s[s], b.finish_s[s]);
    for (std::size_t c = 0; c < out.last_backward_start_s[s].size(); ++c) {
      out.last_backward_start_s[s][c] =
          extend(a.last_backward_start_s[s][c], b.last_backward_start_s[s][c]);
      out.last_backward_end_s[s][c] =
          extend(a.last_backward_end_s[s][c], b.last_backward_end_s[s][c]);
    }
  }
  return out;
}

}  // namespace parplan::cost
