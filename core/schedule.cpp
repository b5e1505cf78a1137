#include "core/schedule.h"

#include <algorithm>

#include "core/check.h"

namespace parplan {

namespace {

struct VirtualMicroBatch {
  int64_t micro_batch;
  int64_t chunk;
};

// Megatron-Core get_schedule_table: micro-batches in groups of pp, each group run through
// every model chunk before the next group starts.
std::vector<VirtualMicroBatch> interleaved_table(int64_t m, int64_t vpp, int64_t group) {
  std::vector<VirtualMicroBatch> table;
  table.reserve(m * vpp);
  for (int64_t first = 0; first < m; first += group) {
    const int64_t last = std::min(first + group, m);
    for (int64_t chunk = 0; chunk < vpp; ++chunk) {
      for (int64_t mb = first; mb < last; ++mb) table.push_back({mb, chunk});
    }
  }
  return table;
}

std::vector<PipeAction> gpipe(const PipelineShape& s) {
  std::vector<PipeAction> out;
  for (int64_t mb = 0; mb < s.num_micro_batches; ++mb) out.push_back({PipeOp::Forward, mb, 0});
  for (int64_t mb = 0; mb < s.num_micro_batches; ++mb) out.push_back({PipeOp::Backward, mb, 0});
  return out;
}

std::vector<PipeAction> one_f_one_b(const PipelineShape& s, int64_t stage) {
  const int64_t m = s.num_micro_batches;
  const int64_t warmup = warmup_forwards(s, stage);
  std::vector<PipeAction> out;
  int64_t next_forward = 0;
  int64_t next_backward = 0;
  for (; next_forward < warmup; ++next_forward) out.push_back({PipeOp::Forward, next_forward, 0});
  while (next_forward < m) {
    out.push_back({PipeOp::Forward, next_forward++, 0});
    out.push_back({PipeOp::Backward, next_backward++, 0});
  }
  while (next_backward < m) out.push_back({PipeOp::Backward, next_backward++, 0});
  return out;
}

std::vector<PipeAction> interleaved(const PipelineShape& s, int64_t stage) {
  const int64_t total = s.num_micro_batches * s.vpp;
  const auto table = interleaved_table(s.num_micro_batches, s.vpp, s.pp);
  const int64_t warmup = warmup_forwards(s, stage);
  std::vector<PipeAction> out;
  auto forward = [&](int64_t k) {
    out.push_back({PipeOp::Forward, table[k].micro_batch, table[k].chunk});
  };
  auto backward = [&](int64_t k) {
    out.push_back({PipeOp::Backward, table[k].micro_batch, s.vpp - 1 - table[k].chunk});
  };
  int64_t f = 0;
  int64_t b = 0;
  for (; f < warmup; ++f) forward(f);
  while (f < total) {
    forward(f++);
    backward(b++);
  }
  while (b < total) backward(b++);
  return out;
}

// ZB-H1 (Qi et al. 2023, Fig. 3): the 1F1B order with each backward split into B (input
// gradient, on the critical path) and W (weight gradient). Stage s postpones its W passes by
// s slots: later stages send input gradients upstream first and run the postponed W passes
// in their cool-down idle time, while the first stage (the last to finish) never idles. The
// warm-up forwards, and hence the activation memory, match 1F1B.
std::vector<PipeAction> zero_bubble_h1(const PipelineShape& s, int64_t stage) {
  const int64_t m = s.num_micro_batches;
  const int64_t warmup = warmup_forwards(s, stage);
  const int64_t delay = std::min<int64_t>(stage, m);
  std::vector<PipeAction> out;
  int64_t f = 0;
  int64_t b = 0;
  int64_t w = 0;
  for (; f < warmup; ++f) out.push_back({PipeOp::Forward, f, 0});
  while (f < m) {
    out.push_back({PipeOp::Forward, f++, 0});
    out.push_back({PipeOp::BackwardInput, b++, 0});
    if (b > delay) out.push_back({PipeOp::BackwardWeight, w++, 0});
  }
  while (b < m) {
    out.push_back({PipeOp::BackwardInput, b++, 0});
    if (b > delay) out.push_back({PipeOp::BackwardWeight, w++, 0});
  }
  while (w < m) out.push_back({PipeOp::BackwardWeight, w++, 0});
  return out;
}

}  // namespace

const char* to_string(PipeOp op) {
  switch (op) {
    case PipeOp::Forward:
      return "forward";
    case PipeOp::Backward:
      return "backward";
    case PipeOp::BackwardInput:
      return "backward-input";
    case PipeOp::BackwardWeight:
      return "backward-weight";
  }
  return "?";
}

int64_t warmup_forwards(const PipelineShape& s, int64_t stage) {
  const int64_t m = s.num_micro_batches;
  switch (s.kind) {
    case ScheduleKind::Gpipe:
      return m;
    case ScheduleKind::Interleaved: {
      const int64_t total = m * s.vpp;
      if (s.vpp == 1) return std::min(s.pp - stage - 1, m);
      // Megatron-Core: (pp - rank - 1) * 2 + (vpp - 1) * group, group = pp.
      const int64_t warmup = (s.pp - stage - 1) * 2 + (s.vpp - 1) * s.pp;
      return std::min(warmup, total);
    }
    case ScheduleKind::OneFOneB:
    case ScheduleKind::ZeroBubble:
    case ScheduleKind::DualPipe:
      break;
  }
  return std::min(s.pp - stage - 1, m);
}

PipelineShape pipeline_shape(const ParallelPlan& plan, int64_t global_batch_size) {
  return {plan.schedule, plan.pp, plan.vpp, plan.num_micro_batches(global_batch_size)};
}

std::vector<PipeAction> stage_schedule(const PipelineShape& shape, int64_t stage) {
  PARPLAN_ASSERT(stage >= 0 && stage < shape.pp);
  PARPLAN_ASSERT(shape.num_micro_batches >= 1 && shape.vpp >= 1);
  switch (shape.kind) {
    case ScheduleKind::Gpipe:
      return gpipe(shape);
    case ScheduleKind::Interleaved:
      return shape.vpp > 1 ? interleaved(shape, stage) : one_f_one_b(shape, stage);
    case ScheduleKind::ZeroBubble:
    case ScheduleKind::DualPipe:
      // DualPipe (bidirectional, DeepSeek-V3 §3.2.1) is approximated by ZB-H1's order: both
      // defer weight gradients into the cool-down; DualPipe's extra overlap of communication
      // is modelled in the layer costs.
      return zero_bubble_h1(shape, stage);
    case ScheduleKind::OneFOneB:
      break;
  }
  return one_f_one_b(shape, stage);
}

std::vector<std::vector<PipeAction>> pipeline_schedule(const PipelineShape& shape) {
  std::vector<std::vector<PipeAction>> out;
  out.reserve(shape.pp);
  for (int64_t stage = 0; stage < shape.pp; ++stage) out.push_back(stage_schedule(shape, stage));
  return out;
}

int64_t peak_in_flight_chunks(const PipelineShape& shape, int64_t stage) {
  // After its warm-up forwards a stage alternates one forward with one backward, so its live
  // count peaks at warm-up + 1 (all of them for GPipe). tests/core/schedule_test.cpp checks
  // this closed form against a walk over stage_schedule().
  const int64_t total = shape.num_micro_batches * shape.vpp;
  if (shape.kind == ScheduleKind::Gpipe) return shape.num_micro_batches;
  return std::min(warmup_forwards(shape, stage) + 1, total);
}

}  // namespace parplan
