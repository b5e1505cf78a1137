#include "cost_models/pipeline_sim.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "core/check.h"

namespace parplan::cost {

namespace {

constexpr double kNotDone = -1.0;
constexpr int64_t kExactSingleStageMicroBatches = 4096;

}  // namespace

namespace {

// The action lists of a shape, flattened with their dependencies resolved to indices, cached
// per thread: the planner simulates many plans of the same shape. Completion times live in
// one array: forwards of (virtual stage v, micro-batch b) at v*m + b, backwards (input part)
// at V*m + v*m + b.
struct FlatAction {
  PipeOp op;
  int32_t chunk;
  int32_t wait_a;  // completion time this action waits for, or -1
  int32_t wait_b;  // a second one, or -1
  bool p2p_a;      // wait_a arrives from another stage: add the transfer time
  bool p2p_b;
  int32_t done;      // completion time this action sets, or -1 (weight gradients)
  int32_t duration;  // index into the per-(stage, chunk, kind) durations
  int32_t micro_batch;
};
using FlatSchedule = std::vector<std::vector<FlatAction>>;

enum DurationKind : int32_t { kForward = 0, kBackwardInput = 1, kBackwardWeight = 2 };

const FlatSchedule& flat_schedule(const PipelineShape& shape) {
  using Key = std::tuple<int, int64_t, int64_t, int64_t>;
  thread_local std::map<Key, FlatSchedule> cache;
  const Key key{static_cast<int>(shape.kind), shape.pp, shape.vpp, shape.num_micro_batches};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();
  const int64_t m = shape.num_micro_batches;
  const int64_t virtual_stages = shape.pp * shape.vpp;
  const int64_t backward_base = virtual_stages * m;
  FlatSchedule flat;
  for (int64_t s = 0; s < shape.pp; ++s) {
    std::vector<FlatAction> list;
    for (const PipeAction& a : stage_schedule(shape, s)) {
      const int64_t v = a.chunk * shape.pp + s;
      const int64_t slot = v * m + a.micro_batch;
      FlatAction f{a.op, static_cast<int32_t>(a.chunk),      -1, -1, false, false, -1,
                   0,    static_cast<int32_t>(a.micro_batch)};
      const auto duration = [&](DurationKind kind) {
        return static_cast<int32_t>((s * shape.vpp + a.chunk) * 3 + kind);
      };
      if (a.op == PipeOp::Forward) {
        if (v > 0) {  // activations from the previous virtual stage
          f.wait_a = static_cast<int32_t>(slot - m);
          f.p2p_a = true;
        }
        f.done = static_cast<int32_t>(slot);
        f.duration = duration(kForward);
      } else if (a.op == PipeOp::BackwardWeight) {
        f.wait_a = static_cast<int32_t>(backward_base + slot);
        f.duration = duration(kBackwardWeight);
      } else {
        f.wait_a = static_cast<int32_t>(slot);  // its own forward
        if (v < virtual_stages - 1) {           // gradients from the next virtual stage
          f.wait_b = static_cast<int32_t>(backward_base + slot + m);
          f.p2p_b = true;
        }
        f.done = static_cast<int32_t>(backward_base + slot);
        f.duration = duration(kBackwardInput);
      }
      list.push_back(f);
    }
    flat.push_back(std::move(list));
  }
  return cache.emplace(key, std::move(flat)).first->second;
}

}  // namespace

PipelineResult simulate_pipeline(const PipelineInput& in) {
  const PipelineShape& shape = in.shape;
  const int64_t pp = shape.pp;
  const int64_t vpp = shape.vpp;
  const int64_t m = shape.num_micro_batches;
  const int64_t virtual_stages = pp * vpp;
  PARPLAN_ASSERT(static_cast<int64_t>(in.stages.size()) == pp);

  const FlatSchedule& lists = flat_schedule(shape);
  std::vector<double> done(static_cast<std::size_t>(2 * virtual_stages * m), kNotDone);

  PipelineResult result;
  result.busy_s.assign(pp, 0.0);
  result.finish_s.assign(pp, 0.0);
  result.last_backward_start_s.assign(pp, std::vector<double>(vpp, 0.0));
  result.last_backward_end_s.assign(pp, std::vector<double>(vpp, 0.0));
  std::vector<std::size_t> next(pp, 0);
  std::vector<double> free_at(pp, 0.0);
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

  std::size_t remaining = 0;
  for (const auto& list : lists) remaining += list.size();
  while (remaining > 0) {
    bool progress = false;
    for (int64_t s = 0; s < pp; ++s) {
      const auto& list = lists[s];
      std::size_t i = next[s];
      double free = free_at[s];
      double busy = result.busy_s[s];
      auto& last_start = result.last_backward_start_s[s];
      auto& last_end = result.last_backward_end_s[s];
      while (i < list.size()) {
        const FlatAction& a = list[i];
        double ready = 0.0;
        if (a.wait_a >= 0) {
          const double t = done[a.wait_a];
          if (t == kNotDone) break;
          ready = std::max(ready, a.p2p_a ? t + in.p2p_s : t);
        }
        if (a.wait_b >= 0) {
          const double t = done[a.wait_b];
          if (t == kNotDone) break;
          ready = std::max(ready, a.p2p_b ? t + in.p2p_s : t);
        }
        const double duration = durations[a.duration];
        const double start = std::max(free, ready);
        const double end = start + duration;
        free = end;
        busy += duration;
        if (a.done >= 0) done[a.done] = end;
        if (a.op == PipeOp::Forward) {
        } else if (a.op != PipeOp::BackwardWeight) {
          last_start[a.chunk] = start;
          last_end[a.chunk] = end;
        } else {
          last_end[a.chunk] = end;
        }
        if (in.record_events) {
          result.events.push_back({s, a.op, a.micro_batch, a.chunk, start, end});
        }
        ++i;
        --remaining;
        progress = true;
      }
      next[s] = i;
      free_at[s] = free;
      result.busy_s[s] = busy;
    }
    PARPLAN_ASSERT(progress);  // the schedules are deadlock-free (tests/core/schedule_test.cpp)
  }
  for (int64_t s = 0; s < pp; ++s) {
    result.finish_s[s] = free_at[s];
    result.makespan_s = std::max(result.makespan_s, free_at[s]);
  }
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
