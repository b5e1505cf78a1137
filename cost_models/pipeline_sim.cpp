#include "cost_models/pipeline_sim.h"

#include <algorithm>
#include <limits>

#include "core/check.h"

namespace parplan::cost {

namespace {

constexpr double kNotDone = -1.0;

}  // namespace

PipelineResult simulate_pipeline(const PipelineInput& in) {
  const PipelineShape& shape = in.shape;
  const int64_t pp = shape.pp;
  const int64_t vpp = shape.vpp;
  const int64_t m = shape.num_micro_batches;
  const int64_t virtual_stages = pp * vpp;
  PARPLAN_ASSERT(static_cast<int64_t>(in.stages.size()) == pp);

  const auto lists = pipeline_schedule(shape);
  // Completion times per (virtual stage, micro-batch): forward, backward (input part).
  std::vector<double> forward_done(virtual_stages * m, kNotDone);
  std::vector<double> backward_done(virtual_stages * m, kNotDone);
  auto index = [m](int64_t v, int64_t mb) { return v * m + mb; };

  PipelineResult result;
  result.busy_s.assign(pp, 0.0);
  result.finish_s.assign(pp, 0.0);
  result.last_backward_start_s.assign(pp, std::vector<double>(vpp, 0.0));
  result.last_backward_end_s.assign(pp, std::vector<double>(vpp, 0.0));
  std::vector<std::size_t> next(pp, 0);
  std::vector<double> free_at(pp, 0.0);
  const bool split_backward = shape.kind == ScheduleKind::ZeroBubble;

  std::size_t remaining = 0;
  for (const auto& list : lists) remaining += list.size();
  while (remaining > 0) {
    bool progress = false;
    for (int64_t s = 0; s < pp; ++s) {
      const auto& list = lists[s];
      const StageTimes& times = in.stages[s];
      while (next[s] < list.size()) {
        const PipeAction& a = list[next[s]];
        const int64_t v = a.chunk * pp + s;
        double ready = 0.0;
        double duration = 0.0;
        if (a.op == PipeOp::Forward) {
          if (v > 0) {
            const double prev = forward_done[index(v - 1, a.micro_batch)];
            if (prev == kNotDone) break;
            // Adjacent virtual stages on different ranks exchange activations.
            ready = prev + in.p2p_s;
          }
          duration = times.forward[a.chunk];
        } else if (a.op == PipeOp::BackwardWeight) {
          const double own = backward_done[index(v, a.micro_batch)];
          if (own == kNotDone) break;
          ready = own;
          duration = times.backward_weight.empty() ? 0.0 : times.backward_weight[a.chunk];
        } else {
          const double own_forward = forward_done[index(v, a.micro_batch)];
          if (own_forward == kNotDone) break;
          ready = own_forward;
          if (v < virtual_stages - 1) {
            const double later = backward_done[index(v + 1, a.micro_batch)];
            if (later == kNotDone) break;
            ready = std::max(ready, later + in.p2p_s);
          }
          duration = times.backward[a.chunk];
          if (split_backward && !times.backward_weight.empty()) {
            duration -= times.backward_weight[a.chunk];
          }
        }
        const double start = std::max(free_at[s], ready);
        const double end = start + duration;
        free_at[s] = end;
        result.busy_s[s] += duration;
        if (a.op == PipeOp::Forward) {
          forward_done[index(v, a.micro_batch)] = end;
        } else if (a.op != PipeOp::BackwardWeight) {
          backward_done[index(v, a.micro_batch)] = end;
          result.last_backward_start_s[s][a.chunk] = start;
          result.last_backward_end_s[s][a.chunk] = end;
        } else {
          result.last_backward_end_s[s][a.chunk] = end;
        }
        if (in.record_events) {
          result.events.push_back({s, a.op, a.micro_batch, a.chunk, start, end});
        }
        ++next[s];
        --remaining;
        progress = true;
      }
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
  const int64_t base = ((4 * pp * in.shape.vpp + 4 * pp) / step + 1) * step + m % step;
  if (in.record_events || pp == 1 || m <= base + step) return simulate_pipeline(in);
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
