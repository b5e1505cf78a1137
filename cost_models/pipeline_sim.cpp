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

// The action lists of a shape, flattened, cached per thread: the planner simulates many
// plans of the same shape.
struct FlatAction {
  PipeOp op;
  int32_t micro_batch;
  int32_t chunk;
  int32_t virtual_stage;
};
using FlatSchedule = std::vector<std::vector<FlatAction>>;

const FlatSchedule& flat_schedule(const PipelineShape& shape) {
  using Key = std::tuple<int, int64_t, int64_t, int64_t>;
  thread_local std::map<Key, FlatSchedule> cache;
  const Key key{static_cast<int>(shape.kind), shape.pp, shape.vpp, shape.num_micro_batches};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 256) cache.clear();
  FlatSchedule flat;
  for (int64_t s = 0; s < shape.pp; ++s) {
    std::vector<FlatAction> list;
    for (const PipeAction& a : stage_schedule(shape, s)) {
      list.push_back({a.op, static_cast<int32_t>(a.micro_batch), static_cast<int32_t>(a.chunk),
                      static_cast<int32_t>(a.chunk * shape.pp + s)});
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
  // Completion times per (virtual stage, micro-batch): forward, backward (input part).
  std::vector<double> forward_done(virtual_stages * m, kNotDone);
  std::vector<double> backward_done(virtual_stages * m, kNotDone);

  PipelineResult result;
  result.busy_s.assign(pp, 0.0);
  result.finish_s.assign(pp, 0.0);
  result.last_backward_start_s.assign(pp, std::vector<double>(vpp, 0.0));
  result.last_backward_end_s.assign(pp, std::vector<double>(vpp, 0.0));
  std::vector<std::size_t> next(pp, 0);
  std::vector<double> free_at(pp, 0.0);
  const bool split_backward =
      shape.kind == ScheduleKind::ZeroBubble || shape.kind == ScheduleKind::DualPipe;
  // Backward (input part) and weight-gradient durations per stage and chunk.
  std::vector<double> backward_input(pp * vpp), backward_weight(pp * vpp);
  for (int64_t s = 0; s < pp; ++s) {
    for (int64_t c = 0; c < vpp; ++c) {
      const StageTimes& t = in.stages[s];
      const double w = t.backward_weight.empty() ? 0.0 : t.backward_weight[c];
      backward_weight[s * vpp + c] = w;
      backward_input[s * vpp + c] = split_backward ? t.backward[c] - w : t.backward[c];
    }
  }

  std::size_t remaining = 0;
  for (const auto& list : lists) remaining += list.size();
  while (remaining > 0) {
    bool progress = false;
    for (int64_t s = 0; s < pp; ++s) {
      const auto& list = lists[s];
      const StageTimes& times = in.stages[s];
      std::size_t i = next[s];
      double free = free_at[s];
      while (i < list.size()) {
        const FlatAction& a = list[i];
        const int64_t v = a.virtual_stage;
        const int64_t slot = v * m + a.micro_batch;
        double ready = 0.0;
        double duration = 0.0;
        if (a.op == PipeOp::Forward) {
          if (v > 0) {
            const double prev = forward_done[slot - m];
            if (prev == kNotDone) break;
            ready = prev + in.p2p_s;  // activations from the previous virtual stage
          }
          duration = times.forward[a.chunk];
        } else if (a.op == PipeOp::BackwardWeight) {
          ready = backward_done[slot];
          if (ready == kNotDone) break;
          duration = backward_weight[s * vpp + a.chunk];
        } else {
          ready = forward_done[slot];
          if (ready == kNotDone) break;
          if (v < virtual_stages - 1) {
            const double later = backward_done[slot + m];
            if (later == kNotDone) break;
            ready = std::max(ready, later + in.p2p_s);
          }
          duration = backward_input[s * vpp + a.chunk];
        }
        const double start = std::max(free, ready);
        const double end = start + duration;
        free = end;
        result.busy_s[s] += duration;
        if (a.op == PipeOp::Forward) {
          forward_done[slot] = end;
        } else if (a.op != PipeOp::BackwardWeight) {
          backward_done[slot] = end;
          result.last_backward_start_s[s][a.chunk] = start;
          result.last_backward_end_s[s][a.chunk] = end;
        } else {
          result.last_backward_end_s[s][a.chunk] = end;
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
