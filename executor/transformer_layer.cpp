#include "executor/transformer_layer.h"

namespace parplan::executor {

template <typename T>
LayerWeights<T> layer_weights(T* base, const LayerOffsets& o) {
  auto at = [base](int64_t offset) { return offset < 0 ? nullptr : base + offset; };
  return {at(o.ln1_w), at(o.ln1_b), at(o.qkv), at(o.proj),
          at(o.ln2_w), at(o.ln2_b), at(o.fc1), at(o.fc2)};
}

template <typename T>
void LayerActivations<T>::clear() {
  for (DeviceBuffer<T>* b : {&ln1, &ln1_mean, &ln1_rstd, &qkv, &attn, &lse, &x2, &ln2, &ln2_mean,
                             &ln2_rstd, &fc, &act}) {
    b->reset();
  }
}

template <typename T>
void norm_forward(StepContext<T>& ctx, T* out, T* mean, T* rstd, const T* in, const T* weight,
                  const T* bias, int64_t rows) {
  if (ctx.dims.rmsnorm) {
    ctx.compute.rmsnorm_forward(out, rstd, in, weight, rows, ctx.dims.hidden);
  } else {
    ctx.compute.layernorm_forward(out, mean, rstd, in, weight, bias, rows, ctx.dims.hidden);
  }
}

template <typename T>
void norm_backward(StepContext<T>& ctx, T* dinp, T* dweight, T* dbias, const T* dout, const T* in,
                   const T* weight, const T* mean, const T* rstd, int64_t rows) {
  if (ctx.dims.rmsnorm) {
    ctx.compute.rmsnorm_backward(dinp, dweight, dout, in, weight, rstd, rows, ctx.dims.hidden);
  } else {
    ctx.compute.layernorm_backward(dinp, dweight, dbias, dout, in, weight, mean, rstd, rows,
                                   ctx.dims.hidden);
  }
}

namespace {

template <typename T>
AttentionShape attention_shape(const StepContext<T>& ctx) {
  return {ctx.dims.seq, ctx.batch, ctx.dims.heads_local(), ctx.dims.groups_local(),
          ctx.dims.head_dim};
}

template <typename T>
void allocate_norm(StepContext<T>& ctx, DeviceBuffer<T>& out, DeviceBuffer<T>& mean,
                   DeviceBuffer<T>& rstd) {
  const int64_t rows = ctx.rows_local();
  out = ctx.buffer(rows * ctx.dims.hidden);
  if (!ctx.dims.rmsnorm) mean = ctx.buffer(rows);
  rstd = ctx.buffer(rows);
}

template <typename T>
void core_attention_forward(StepContext<T>& ctx, LayerActivations<T>& a) {
  const AttentionShape shape = attention_shape(ctx);
  a.attn = ctx.buffer(shape.rows() * shape.heads * shape.head_dim);
  a.lse = ctx.buffer(shape.batch * shape.heads * shape.seq);
  ctx.compute.attention_forward(a.attn.data(), a.lse.data(), a.qkv.data(), shape);
}

}  // namespace

template <typename T>
DeviceBuffer<T> layer_forward(StepContext<T>& ctx, const LayerWeights<T>& w, const T* x,
                              LayerActivations<T>& a) {
  const ModelDims& d = ctx.dims;
  const int64_t C = d.hidden;
  const int64_t N = ctx.rows_full();
  const int64_t Nl = ctx.rows_local();
  const AttentionShape shape = attention_shape(ctx);
  const int64_t attn_width = shape.heads * shape.head_dim;

  // --- attention block ---
  allocate_norm(ctx, a.ln1, a.ln1_mean, a.ln1_rstd);
  norm_forward(ctx, a.ln1.data(), a.ln1_mean.data(), a.ln1_rstd.data(), x, w.ln1_w, w.ln1_b, Nl);
  a.qkv = ctx.buffer(N * d.qkv_local());
  {
    TpView<T> ln1_full = enter_tp(ctx, a.ln1.data(), C);
    linear_forward(ctx, a.qkv.data(), ln1_full.data, w.qkv, N, C, d.qkv_local());
  }
  if (d.rotary) ctx.compute.rope(a.qkv.data(), shape, false);
  core_attention_forward(ctx, a);
  {
    DeviceBuffer<T> proj = ctx.buffer(N * C, MemoryKind::Workspace);
    linear_forward(ctx, proj.data(), a.attn.data(), w.proj, N, attn_width, C);
    DeviceBuffer<T> proj_local = exit_tp(ctx, std::move(proj), C);
    a.x2 = ctx.buffer(Nl * C);
    ctx.compute.add(a.x2.data(), x, proj_local.data(), Nl * C);
  }
  // --- MLP block ---
  allocate_norm(ctx, a.ln2, a.ln2_mean, a.ln2_rstd);
  norm_forward(ctx, a.ln2.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.x2.data(), w.ln2_w,
               w.ln2_b, Nl);
  a.fc = ctx.buffer(N * d.fc1_local());
  {
    TpView<T> ln2_full = enter_tp(ctx, a.ln2.data(), C);
    linear_forward(ctx, a.fc.data(), ln2_full.data, w.fc1, N, C, d.fc1_local());
  }
  a.act = ctx.buffer(N * d.ffn_local());
  if (d.swiglu) {
    ctx.compute.swiglu_forward(a.act.data(), a.fc.data(), N, d.ffn_local());
  } else {
    ctx.compute.gelu_forward(a.act.data(), a.fc.data(), N * d.ffn_local());
  }
  DeviceBuffer<T> y;
  {
    DeviceBuffer<T> mlp = ctx.buffer(N * C, MemoryKind::Workspace);
    linear_forward(ctx, mlp.data(), a.act.data(), w.fc2, N, d.ffn_local(), C);
    DeviceBuffer<T> mlp_local = exit_tp(ctx, std::move(mlp), C);
    y = ctx.buffer(Nl * C);
    ctx.compute.add(y.data(), a.x2.data(), mlp_local.data(), Nl * C);
  }
  if (ctx.recompute == Recompute::Full) {
    a.clear();
  } else if (ctx.recompute == Recompute::Selective) {
    a.attn.reset();
    a.lse.reset();
  }
  return y;
}

template <typename T>
DeviceBuffer<T> layer_backward(StepContext<T>& ctx, const LayerWeights<T>& w,
                               const LayerWeights<T>& g, const T* x, LayerActivations<T>& a,
                               DeviceBuffer<T> dy) {
  const ModelDims& d = ctx.dims;
  const int64_t C = d.hidden;
  const int64_t N = ctx.rows_full();
  const int64_t Nl = ctx.rows_local();
  const AttentionShape shape = attention_shape(ctx);
  const int64_t attn_width = shape.heads * shape.head_dim;

  if (ctx.recompute == Recompute::Full) {
    PhaseScope scope(ctx.timer, Phase::Recompute, Track::Stage, "recompute layer");
    const Recompute saved = ctx.recompute;
    ctx.recompute = Recompute::None;
    layer_forward(ctx, w, x, a);  // the output is not needed again
    ctx.recompute = saved;
  } else if (ctx.recompute == Recompute::Selective) {
    PhaseScope scope(ctx.timer, Phase::Recompute, Track::Stage, "recompute attention");
    core_attention_forward(ctx, a);
  }

  // --- MLP block: y = x2 + fc2(act(fc1(ln2))) ---
  DeviceBuffer<T> dln2;
  {
    TpView<T> dmlp = enter_tp(ctx, dy.data(), C);
    DeviceBuffer<T> dact = ctx.buffer(N * d.ffn_local(), MemoryKind::Workspace);
    linear_backward_input(ctx, dact.data(), dmlp.data, w.fc2, N, d.ffn_local(), C);
    linear_backward_weight(ctx, g.fc2, dmlp.data, a.act.data(), N, d.ffn_local(), C);
    a.act.reset();
    DeviceBuffer<T> dfc = ctx.buffer(N * d.fc1_local(), MemoryKind::Workspace);
    if (d.swiglu) {
      ctx.compute.swiglu_backward(dfc.data(), a.fc.data(), dact.data(), N, d.ffn_local());
    } else {
      ctx.compute.gelu_backward(dfc.data(), a.fc.data(), dact.data(), N * d.ffn_local());
    }
    dact.reset();
    a.fc.reset();
    {
      TpView<T> ln2_full = enter_tp(ctx, a.ln2.data(), C);
      linear_backward_weight(ctx, g.fc1, dfc.data(), ln2_full.data, N, C, d.fc1_local());
    }
    DeviceBuffer<T> dln2_full = ctx.buffer(N * C, MemoryKind::Workspace);
    linear_backward_input(ctx, dln2_full.data(), dfc.data(), w.fc1, N, C, d.fc1_local());
    dfc.reset();
    dln2 = exit_tp(ctx, std::move(dln2_full), C);
  }
  // dx2 = dy + norm2'(dln2): dy is no longer needed, so it becomes dx2.
  DeviceBuffer<T> dx2 = std::move(dy);
  norm_backward(ctx, dx2.data(), g.ln2_w, g.ln2_b, dln2.data(), a.x2.data(), w.ln2_w,
                a.ln2_mean.data(), a.ln2_rstd.data(), Nl);
  dln2.reset();
  a.ln2.reset();
  a.ln2_mean.reset();
  a.ln2_rstd.reset();
  a.x2.reset();

  // --- attention block: x2 = x + proj(attention(qkv(ln1))) ---
  DeviceBuffer<T> dln1;
  {
    TpView<T> dproj = enter_tp(ctx, dx2.data(), C);
    DeviceBuffer<T> dattn = ctx.buffer(N * attn_width, MemoryKind::Workspace);
    linear_backward_input(ctx, dattn.data(), dproj.data, w.proj, N, attn_width, C);
    linear_backward_weight(ctx, g.proj, dproj.data, a.attn.data(), N, attn_width, C);
    a.attn.reset();
    DeviceBuffer<T> dqkv = ctx.buffer(N * d.qkv_local(), MemoryKind::Workspace);
    {
      DeviceBuffer<T> scratch =
          ctx.buffer(ctx.compute.attention_scratch_elements(shape), MemoryKind::Workspace);
      ctx.compute.attention_backward(dqkv.data(), scratch.data(), dattn.data(), a.qkv.data(),
                                     a.lse.data(), shape);
    }
    dattn.reset();
    a.qkv.reset();
    a.lse.reset();
    if (d.rotary) ctx.compute.rope(dqkv.data(), shape, true);
    {
      TpView<T> ln1_full = enter_tp(ctx, a.ln1.data(), C);
      linear_backward_weight(ctx, g.qkv, dqkv.data(), ln1_full.data, N, C, d.qkv_local());
    }
    DeviceBuffer<T> dln1_full = ctx.buffer(N * C, MemoryKind::Workspace);
    linear_backward_input(ctx, dln1_full.data(), dqkv.data(), w.qkv, N, C, d.qkv_local());
    dqkv.reset();
    dln1 = exit_tp(ctx, std::move(dln1_full), C);
  }
  DeviceBuffer<T> dx = std::move(dx2);
  norm_backward(ctx, dx.data(), g.ln1_w, g.ln1_b, dln1.data(), x, w.ln1_w, a.ln1_mean.data(),
                a.ln1_rstd.data(), Nl);
  a.clear();
  return dx;
}

#define PARPLAN_INSTANTIATE(T)                                                                 \
  template LayerWeights<T> layer_weights<T>(T*, const LayerOffsets&);                          \
  template struct LayerActivations<T>;                                                         \
  template DeviceBuffer<T> layer_forward<T>(StepContext<T>&, const LayerWeights<T>&, const T*, \
                                            LayerActivations<T>&);                             \
  template DeviceBuffer<T> layer_backward<T>(StepContext<T>&, const LayerWeights<T>&,          \
                                             const LayerWeights<T>&, const T*,                 \
                                             LayerActivations<T>&, DeviceBuffer<T>);           \
  template void norm_forward<T>(StepContext<T>&, T*, T*, T*, const T*, const T*, const T*,     \
                                int64_t);                                                      \
  template void norm_backward<T>(StepContext<T>&, T*, T*, T*, const T*, const T*, const T*,    \
                                 const T*, const T*, int64_t);

PARPLAN_INSTANTIATE(float)
PARPLAN_INSTANTIATE(double)
#undef PARPLAN_INSTANTIATE

}  // namespace parplan::executor
