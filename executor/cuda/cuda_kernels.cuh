// Launchers of the executor's own CUDA kernels, one per Compute op (executor/compute.h has
// the shapes and conventions; the CPU versions in executor/cpu/ are the reference). All
// launch on the legacy default stream. Instantiated for float and double.
#pragma once

#include <cstdint>

#include "executor/compute.h"

namespace parplan::executor::cuda {

// defines: add, accumulate, sum_squares, sum_squares_many (cuda_kernels.cu)
template <typename T>
void add(T* out, const T* a, const T* b, int64_t n);
template <typename T>
void accumulate(T* out, const T* in, int64_t n);
template <typename T>
double sum_squares(const T* data, int64_t n);
// The sum over count ranges (data[t], n[t]) with one host synchronisation.
template <typename T>
double sum_squares_many(const T* const* data, const int64_t* n, int64_t count);

// defines: layernorm_*, rmsnorm_*
template <typename T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* weight, const T* bias,
                       int64_t rows, int64_t width);
template <typename T>
void layernorm_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp, const T* weight,
                        const T* mean, const T* rstd, int64_t rows, int64_t width);
template <typename T>
void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* weight, int64_t rows, int64_t width);
template <typename T>
void rmsnorm_backward(T* dinp, T* dweight, const T* dout, const T* inp, const T* weight,
                      const T* rstd, int64_t rows, int64_t width);

// defines: gelu_*, swiglu_*
template <typename T>
void gelu_forward(T* out, const T* inp, int64_t n);
template <typename T>
void gelu_backward(T* dinp, const T* inp, const T* dout, int64_t n);
template <typename T>
void swiglu_forward(T* out, const T* inp, int64_t rows, int64_t ffn);
template <typename T>
void swiglu_backward(T* dinp, const T* inp, const T* dout, int64_t rows, int64_t ffn);

// defines: embedding_*, position_*
template <typename T>
void embedding_forward(T* out, const int32_t* tokens, const T* wte, int64_t vocab_start,
                       int64_t vocab_local, int64_t rows, int64_t width);
template <typename T>
void embedding_backward(T* dwte, const T* dout, const int32_t* tokens, int64_t vocab_start,
                        int64_t vocab_local, int64_t rows, int64_t width);
template <typename T>
void position_forward(T* out, const T* wpe, int64_t first_position, int64_t seq_local,
                      int64_t batch, int64_t width);
template <typename T>
void position_backward(T* dwpe, const T* dout, int64_t first_position, int64_t seq_local,
                       int64_t batch, int64_t width);

// defines: xent_*
template <typename T>
void xent_row_max(T* row_max, const T* logits, int64_t rows, int64_t vocab_local,
                  int64_t vocab_valid);
template <typename T>
void xent_sum_exp(T* stats, const T* logits, const T* row_max, const int32_t* targets,
                  int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid);
template <typename T>
void xent_loss(T* losses, const T* row_max, const T* stats, int64_t rows);
template <typename T>
void xent_backward(T* logits, const T* row_max, const T* stats, const int32_t* targets,
                   int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid,
                   T dloss);

// defines: adamw
template <typename T>
void adamw(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWConfig& config, bool decay);

// defines: rope, attention_forward, attention_backward (cuda_attention.cu)
template <typename T>
void rope(T* qkv, const AttentionShape& shape, bool inverse);
template <typename T>
void attention_forward(T* out, T* lse, const T* qkv, const AttentionShape& shape);
template <typename T>
void attention_backward(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* lse,
                        const AttentionShape& shape);
// scratch of the backward: B * heads * T (tiled) or 2 * B * heads * T^2 (fallback) elements.
template <typename T>
int64_t attention_scratch_elements(const AttentionShape& shape);

}  // namespace parplan::executor::cuda
