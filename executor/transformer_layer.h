// One pre-norm transformer layer on one tensor-parallel rank (Megatron-LM, Shoeybi et al.
// 2019, Fig. 3): x2 = x + proj(attention(rope(qkv(norm1(x))))), y = x2 + fc2(act(fc1(norm2(x2)))),
// with column-parallel qkv/fc1, row-parallel proj/fc2, and the tensor-parallel region
// operators of executor/step_context.h around them. The backward pass mirrors the forward
// and recomputes what the plan's recompute mode dropped (full: the whole layer from its
// input; selective: the core attention, Korthikanti et al. 2022 §5).
// Tested against finite differences of the whole model (tests/executor/model_gradient_test.cpp)
// and across plans (plan_equivalence_test.cpp).
#pragma once

#include "executor/parameter_buffer_layout.h"
#include "executor/step_context.h"

namespace parplan::executor {

template <typename T>
struct LayerWeights {
  T* ln1_w = nullptr;
  T* ln1_b = nullptr;
  T* qkv = nullptr;   // (q | k | v) rows x C
  T* proj = nullptr;  // C x heads_local*d
  T* ln2_w = nullptr;
  T* ln2_b = nullptr;
  T* fc1 = nullptr;  // fc1_local x C
  T* fc2 = nullptr;  // C x ffn_local
};

template <typename T>
LayerWeights<T> layer_weights(T* base, const LayerOffsets& o);

// What the forward pass keeps for the backward pass (rows: Nl local, N full).
template <typename T>
struct LayerActivations {
  DeviceBuffer<T> ln1, ln1_mean, ln1_rstd;  // Nl x C, Nl, Nl
  DeviceBuffer<T> qkv;                      // N x qkv_local (after rotary)
  DeviceBuffer<T> attn, lse;                // N x heads_local*d, B x heads_local x T
  DeviceBuffer<T> x2;                       // Nl x C (residual after attention)
  DeviceBuffer<T> ln2, ln2_mean, ln2_rstd;
  DeviceBuffer<T> fc;   // N x fc1_local (before the activation)
  DeviceBuffer<T> act;  // N x ffn_local
  void clear();
};

// y (Nl x C) from x (Nl x C); fills `a` as the recompute mode allows.
template <typename T>
DeviceBuffer<T> layer_forward(StepContext<T>& ctx, const LayerWeights<T>& w, const T* x,
                              LayerActivations<T>& a);

// dx from dy; adds the weight gradients into `g`; releases `a`.
template <typename T>
DeviceBuffer<T> layer_backward(StepContext<T>& ctx, const LayerWeights<T>& w,
                               const LayerWeights<T>& g, const T* x, LayerActivations<T>& a,
                               DeviceBuffer<T> dy);

// Layer or RMS norm (per the model) over `rows` rows of width C. `mean` is unused for RMS.
template <typename T>
void norm_forward(StepContext<T>& ctx, T* out, T* mean, T* rstd, const T* in, const T* weight,
                  const T* bias, int64_t rows);
template <typename T>
void norm_backward(StepContext<T>& ctx, T* dinp, T* dweight, T* dbias, const T* dout, const T* in,
                   const T* weight, const T* mean, const T* rstd, int64_t rows);

}  // namespace parplan::executor
