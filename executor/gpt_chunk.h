// A model chunk (a run of consecutive layers on one pipeline rank) and the parts that only
// the first and last virtual stages have: the vocabulary-parallel embedding (+ learned
// position embedding) and the head (final norm, output layer, vocabulary-parallel
// cross-entropy; Megatron-LM's VocabParallelEmbedding and vocab_parallel_cross_entropy).
// Tested against finite differences (tests/executor/model_gradient_test.cpp) and across
// plans (plan_equivalence_test.cpp).
#pragma once

#include <vector>

#include "executor/parameter_buffer_layout.h"
#include "executor/step_context.h"
#include "executor/transformer_layer.h"

namespace parplan::executor {

template <typename T>
struct HeadActivations {
  DeviceBuffer<T> input;                 // Nl x C: the last layer's output
  DeviceBuffer<T> hf, hf_mean, hf_rstd;  // final norm
  DeviceBuffer<T> logits;                // N x vocab_local (gradient in place in backward)
  DeviceBuffer<T> row_max, stats;        // N, 2N (all-reduced over tp)
};

template <typename T>
struct ChunkActivations {
  std::vector<DeviceBuffer<T>> inputs;  // inputs[i]: input of layer i
  std::vector<LayerActivations<T>> layers;
  DeviceBuffer<int32_t> tokens;   // first virtual stage
  DeviceBuffer<int32_t> targets;  // last virtual stage
  HeadActivations<T> head;
};

// Nl x C hidden states of the first layer from the tokens (already in `acts.tokens`).
template <typename T>
DeviceBuffer<T> embedding_forward(StepContext<T>& ctx, const ChunkLayout& layout, const T* params,
                                  const ChunkActivations<T>& acts);
template <typename T>
void embedding_backward(StepContext<T>& ctx, const ChunkLayout& layout, T* grads,
                        const ChunkActivations<T>& acts, DeviceBuffer<T> dh);

// Runs the chunk's layers; returns the last layer's output.
template <typename T>
DeviceBuffer<T> chunk_forward(StepContext<T>& ctx, const ChunkLayout& layout, T* params,
                              ChunkActivations<T>& acts, DeviceBuffer<T> input);
template <typename T>
DeviceBuffer<T> chunk_backward(StepContext<T>& ctx, const ChunkLayout& layout, T* params, T* grads,
                               ChunkActivations<T>& acts, DeviceBuffer<T> dout);

// Final norm, logits, cross-entropy of `input`; returns the sum of the token losses of the
// micro-batch (identical on every tp rank).
template <typename T>
double head_forward(StepContext<T>& ctx, const ChunkLayout& layout, const T* params,
                    ChunkActivations<T>& acts, DeviceBuffer<T> input);
// Gradient of dloss * (sum of token losses) w.r.t. the head's input.
template <typename T>
DeviceBuffer<T> head_backward(StepContext<T>& ctx, const ChunkLayout& layout, const T* params,
                              T* grads, ChunkActivations<T>& acts, T dloss);

}  // namespace parplan::executor
