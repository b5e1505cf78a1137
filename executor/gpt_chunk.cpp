#include "executor/gpt_chunk.h"

#include <numeric>

namespace parplan::executor {

template <typename T>
DeviceBuffer<T> embedding_forward(StepContext<T>& ctx, const ChunkLayout& layout, const T* params,
                                  const ChunkActivations<T>& acts) {
  const ModelDims& d = ctx.dims;
  const int64_t C = d.hidden;
  DeviceBuffer<T> emb = ctx.buffer(ctx.rows_full() * C, MemoryKind::Workspace);
  ctx.compute.embedding_forward(emb.data(), acts.tokens.data(), params + layout.wte,
                                ctx.vocab_start(), d.vocab_local(), ctx.rows_full(), C);
  DeviceBuffer<T> h = exit_tp(ctx, std::move(emb), C);
  if (layout.wpe >= 0) {
    ctx.compute.position_forward(h.data(), params + layout.wpe, ctx.first_position(),
                                 ctx.seq_local(), ctx.batch, C);
  }
  return h;
}

template <typename T>
void embedding_backward(StepContext<T>& ctx, const ChunkLayout& layout, T* grads,
                        const ChunkActivations<T>& acts, DeviceBuffer<T> dh) {
  const ModelDims& d = ctx.dims;
  const int64_t C = d.hidden;
  if (layout.wpe >= 0) {
    ctx.compute.position_backward(grads + layout.wpe, dh.data(), ctx.first_position(),
                                  ctx.seq_local(), ctx.batch, C);
  }
  TpView<T> dh_full = enter_tp(ctx, dh.data(), C);
  ctx.compute.embedding_backward(grads + layout.wte, dh_full.data, acts.tokens.data(),
                                 ctx.vocab_start(), d.vocab_local(), ctx.rows_full(), C);
}

template <typename T>
DeviceBuffer<T> chunk_forward(StepContext<T>& ctx, const ChunkLayout& layout, T* params,
                              ChunkActivations<T>& acts, DeviceBuffer<T> input) {
  const std::size_t n = layout.layers.size();
  acts.layers.resize(n);
  acts.inputs.clear();
  acts.inputs.reserve(n);
  acts.inputs.push_back(std::move(input));
  for (std::size_t i = 0; i < n; ++i) {
    const LayerWeights<T> w = layer_weights(params, layout.layers[i]);
    DeviceBuffer<T> y = layer_forward(ctx, w, acts.inputs[i].data(), acts.layers[i]);
    if (i + 1 == n) return y;
    acts.inputs.push_back(std::move(y));
  }
  // No layers on this chunk (an uneven split can leave one empty): pass the input through.
  DeviceBuffer<T> out = std::move(acts.inputs.front());
  acts.inputs.clear();
  return out;
}

template <typename T>
DeviceBuffer<T> chunk_backward(StepContext<T>& ctx, const ChunkLayout& layout, T* params, T* grads,
                               ChunkActivations<T>& acts, DeviceBuffer<T> dout) {
  for (std::size_t i = layout.layers.size(); i-- > 0;) {
    const LayerWeights<T> w = layer_weights(params, layout.layers[i]);
    const LayerWeights<T> g = layer_weights(grads, layout.layers[i]);
    dout = layer_backward(ctx, w, g, acts.inputs[i].data(), acts.layers[i], std::move(dout));
    acts.inputs[i].reset();
  }
  return dout;
}

template <typename T>
double head_forward(StepContext<T>& ctx, const ChunkLayout& layout, const T* params,
                    ChunkActivations<T>& acts, DeviceBuffer<T> input) {
  const ModelDims& d = ctx.dims;
  const int64_t C = d.hidden;
  const int64_t N = ctx.rows_full();
  const int64_t Nl = ctx.rows_local();
  const int64_t vl = d.vocab_local();
  const int64_t valid = d.vocab_valid(ctx.tp_rank);
  HeadActivations<T>& h = acts.head;
  h.input = std::move(input);
  h.hf = ctx.buffer(Nl * C);
  if (!d.rmsnorm) h.hf_mean = ctx.buffer(Nl);
  h.hf_rstd = ctx.buffer(Nl);
  norm_forward(ctx, h.hf.data(), h.hf_mean.data(), h.hf_rstd.data(), h.input.data(),
               params + layout.final_norm_w,
               layout.final_norm_b >= 0 ? params + layout.final_norm_b : nullptr, Nl);
  h.logits = ctx.buffer(N * vl);
  {
    TpView<T> hf_full = enter_tp(ctx, h.hf.data(), C);
    linear_forward(ctx, h.logits.data(), hf_full.data, params + layout.output, N, C, vl);
  }
  h.row_max = ctx.buffer(N);
  h.stats = ctx.buffer(2 * N);
  ctx.compute.xent_row_max(h.row_max.data(), h.logits.data(), N, vl, valid);
  if (ctx.tp != nullptr) {
    PhaseScope scope(ctx.timer, Phase::TpComm, Track::TpComm, "all_reduce max (xent)");
    ctx.tp->all_reduce(h.row_max.data(), N, dtype_of<T>(), ReduceOp::Max);
  }
  ctx.compute.xent_sum_exp(h.stats.data(), h.logits.data(), h.row_max.data(), acts.targets.data(),
                           ctx.vocab_start(), N, vl, valid);
  if (ctx.tp != nullptr) {
    PhaseScope scope(ctx.timer, Phase::TpComm, Track::TpComm, "all_reduce (xent)");
    ctx.tp->all_reduce(h.stats.data(), 2 * N, dtype_of<T>(), ReduceOp::Sum);
  }
  DeviceBuffer<T> losses = ctx.buffer(N, MemoryKind::Workspace);
  ctx.compute.xent_loss(losses.data(), h.row_max.data(), h.stats.data(), N);
  std::vector<T> host(N);
  ctx.compute.copy_to_host(host.data(), losses.data(), N * sizeof(T));
  double sum = 0;
  for (T v : host) sum += static_cast<double>(v);
  return sum;
}

template <typename T>
DeviceBuffer<T> head_backward(StepContext<T>& ctx, const ChunkLayout& layout, const T* params,
                              T* grads, ChunkActivations<T>& acts, T dloss) {
  const ModelDims& d = ctx.dims;
  const int64_t C = d.hidden;
  const int64_t N = ctx.rows_full();
  const int64_t Nl = ctx.rows_local();
  const int64_t vl = d.vocab_local();
  HeadActivations<T>& h = acts.head;
  ctx.compute.xent_backward(h.logits.data(), h.row_max.data(), h.stats.data(), acts.targets.data(),
                            ctx.vocab_start(), N, vl, d.vocab_valid(ctx.tp_rank), dloss);
  h.row_max.reset();
  h.stats.reset();
  DeviceBuffer<T> dhf_full = ctx.buffer(N * C, MemoryKind::Workspace);
  {
    TpView<T> hf_full = enter_tp(ctx, h.hf.data(), C);
    linear_backward_weight(ctx, grads + layout.output, h.logits.data(), hf_full.data, N, C, vl);
  }
  linear_backward_input(ctx, dhf_full.data(), h.logits.data(), params + layout.output, N, C, vl);
  h.logits.reset();
  DeviceBuffer<T> dhf = exit_tp(ctx, std::move(dhf_full), C);
  DeviceBuffer<T> dx = ctx.buffer(Nl * C);
  ctx.compute.set_zero(dx.data(), dx.bytes());
  norm_backward(ctx, dx.data(), grads + layout.final_norm_w,
                layout.final_norm_b >= 0 ? grads + layout.final_norm_b : nullptr, dhf.data(),
                h.input.data(), params + layout.final_norm_w, h.hf_mean.data(), h.hf_rstd.data(),
                Nl);
  h = HeadActivations<T>{};
  return dx;
}

#define PARPLAN_INSTANTIATE(T)                                                                 \
  template DeviceBuffer<T> embedding_forward<T>(StepContext<T>&, const ChunkLayout&, const T*, \
                                                const ChunkActivations<T>&);                   \
  template void embedding_backward<T>(StepContext<T>&, const ChunkLayout&, T*,                 \
                                      const ChunkActivations<T>&, DeviceBuffer<T>);            \
  template DeviceBuffer<T> chunk_forward<T>(StepContext<T>&, const ChunkLayout&, T*,           \
                                            ChunkActivations<T>&, DeviceBuffer<T>);            \
  template DeviceBuffer<T> chunk_backward<T>(StepContext<T>&, const ChunkLayout&, T*, T*,      \
                                             ChunkActivations<T>&, DeviceBuffer<T>);           \
  template double head_forward<T>(StepContext<T>&, const ChunkLayout&, const T*,               \
                                  ChunkActivations<T>&, DeviceBuffer<T>);                      \
  template DeviceBuffer<T> head_backward<T>(StepContext<T>&, const ChunkLayout&, const T*, T*, \
                                            ChunkActivations<T>&, T);

PARPLAN_INSTANTIATE(float)
PARPLAN_INSTANTIATE(double)
#undef PARPLAN_INSTANTIATE

}  // namespace parplan::executor
