// StepContext: what the model code of one rank needs to run a layer: the backend, the
// allocation tracker, the phase timer, the model widths and the tensor-parallel group.
// Also the two Megatron tensor-parallel region operators and the GEMM wrappers:
//   enter_tp (Megatron's "f"; with sequence parallelism "g-bar"): identity, or all-gather of
//     the sequence shards;
//   exit_tp ("g"; with sequence parallelism a reduce-scatter): all-reduce of partial sums.
// The backward pass uses them the other way round (Korthikanti et al. 2022, §4.2.2).
// Tested through the plan-equivalence tests (tests/executor/plan_equivalence_test.cpp).
#pragma once

#include <cstdint>

#include "core/parallel_plan.h"
#include "executor/comm.h"
#include "executor/compute.h"
#include "executor/memory_tracker.h"
#include "executor/parameter_buffer_layout.h"
#include "executor/phase_timer.h"

namespace parplan::executor {

struct GemmStats {
  double flops = 0;
  // CPU time of the rank's thread inside GEMM calls (synchronous backends only): the GEMMs'
  // own efficiency, unaffected by other processes sharing the core.
  double seconds = 0;
};

template <typename T>
struct StepContext {
  StepContext(Compute<T>& c, MemoryTracker& m, PhaseTimer& t, const ModelDims& d)
      : compute(c), memory(m), timer(t), dims(d) {}

  Compute<T>& compute;
  MemoryTracker& memory;
  PhaseTimer& timer;
  const ModelDims& dims;
  Comm* tp = nullptr;  // nullptr when tp == 1
  int64_t tp_rank = 0;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  int64_t batch = 1;  // micro-batch size B
  GemmStats gemm;

  int64_t rows_full() const { return dims.seq * batch; }
  int64_t seq_local() const { return sequence_parallel ? dims.seq / dims.tp : dims.seq; }
  int64_t rows_local() const { return seq_local() * batch; }
  int64_t first_position() const { return sequence_parallel ? tp_rank * seq_local() : 0; }
  int64_t vocab_start() const { return tp_rank * dims.vocab_local(); }

  DeviceBuffer<T> buffer(int64_t size, MemoryKind kind = MemoryKind::Activations) {
    return DeviceBuffer<T>(memory, size, kind);
  }
};

// A tensor that is either borrowed or owned (after a collective that needs a new buffer).
template <typename T>
struct TpView {
  DeviceBuffer<T> owned;
  T* data = nullptr;
};

// f: rows_local x width -> rows_full x width (all-gather under sequence parallelism).
template <typename T>
TpView<T> enter_tp(StepContext<T>& ctx, T* local, int64_t width) {
  TpView<T> view;
  if (ctx.tp == nullptr || !ctx.sequence_parallel) {
    view.data = local;
    return view;
  }
  view.owned = ctx.buffer(ctx.rows_full() * width, MemoryKind::Workspace);
  view.data = view.owned.data();
  PhaseScope scope(ctx.timer, Phase::TpComm, Track::TpComm, "all_gather");
  ctx.tp->all_gather(local, view.data, ctx.rows_local() * width, dtype_of<T>());
  return view;
}

// g: partial sums rows_full x width -> rows_local x width (all-reduce in place, or
// reduce-scatter under sequence parallelism). Takes ownership of `partial`.
template <typename T>
DeviceBuffer<T> exit_tp(StepContext<T>& ctx, DeviceBuffer<T> partial, int64_t width) {
  if (ctx.tp == nullptr) return partial;
  if (!ctx.sequence_parallel) {
    PhaseScope scope(ctx.timer, Phase::TpComm, Track::TpComm, "all_reduce");
    ctx.tp->all_reduce(partial.data(), partial.size(), dtype_of<T>(), ReduceOp::Sum);
    return partial;
  }
  DeviceBuffer<T> out = ctx.buffer(ctx.rows_local() * width, MemoryKind::Activations);
  PhaseScope scope(ctx.timer, Phase::TpComm, Track::TpComm, "reduce_scatter");
  ctx.tp->reduce_scatter(partial.data(), out.data(), ctx.rows_local() * width, dtype_of<T>());
  return out;
}

template <typename T>
void timed_gemm(StepContext<T>& ctx, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a,
                int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  ctx.gemm.flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (!ctx.compute.synchronous()) {
    ctx.compute.gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const double start = thread_cpu_seconds();
  ctx.compute.gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
  ctx.gemm.seconds += thread_cpu_seconds() - start;
}

// out (rows x out_width) = in (rows x in_width) * W^T, W: out_width x in_width.
template <typename T>
void linear_forward(StepContext<T>& ctx, T* out, const T* in, const T* weight, int64_t rows,
                    int64_t in_width, int64_t out_width) {
  timed_gemm(ctx, false, true, rows, out_width, in_width, in, in_width, weight, in_width, T(0), out,
             out_width);
}

// din (rows x in_width) = dout (rows x out_width) * W.
template <typename T>
void linear_backward_input(StepContext<T>& ctx, T* din, const T* dout, const T* weight,
                           int64_t rows, int64_t in_width, int64_t out_width) {
  timed_gemm(ctx, false, false, rows, in_width, out_width, dout, out_width, weight, in_width, T(0),
             din, in_width);
}

// dW (out_width x in_width) += dout^T * in.
template <typename T>
void linear_backward_weight(StepContext<T>& ctx, T* dweight, const T* dout, const T* in,
                            int64_t rows, int64_t in_width, int64_t out_width) {
  timed_gemm(ctx, true, false, out_width, in_width, rows, dout, out_width, in, in_width, T(1),
             dweight, in_width);
}

}  // namespace parplan::executor
