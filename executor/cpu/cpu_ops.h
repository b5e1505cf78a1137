// The CPU reference ops (Eigen for matrix products, plain loops elsewhere). Each function is
// the op of the same name in executor/compute.h, which documents shapes and conventions;
// CpuCompute forwards to them and the CUDA tests call them as the reference.
// Instantiated for float and double. Tested in tests/executor/cpu_ops_test.cpp.
#pragma once

#include <cstdint>

#include "executor/compute.h"

namespace parplan::executor::cpu {

inline constexpr double kNormEps = 1e-5;
inline constexpr double kRopeBase = 10000.0;

// defines: gemm
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// defines: layernorm_forward, layernorm_backward, rmsnorm_forward, rmsnorm_backward
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

// defines: gelu_forward, gelu_backward, swiglu_forward, swiglu_backward
template <typename T>
void gelu_forward(T* out, const T* inp, int64_t n);
template <typename T>
void gelu_backward(T* dinp, const T* inp, const T* dout, int64_t n);
template <typename T>
void swiglu_forward(T* out, const T* inp, int64_t rows, int64_t ffn);
template <typename T>
void swiglu_backward(T* dinp, const T* inp, const T* dout, int64_t rows, int64_t ffn);

// defines: rope, attention_forward, attention_backward (cpu_attention.cpp)
template <typename T>
void rope(T* qkv, const AttentionShape& shape, bool inverse);
template <typename T>
void attention_forward(T* out, T* lse, const T* qkv, const AttentionShape& shape);
template <typename T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* lse,
                        const AttentionShape& shape);

// defines: embedding_forward, embedding_backward, position_forward, position_backward
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

// defines: xent_row_max, xent_sum_exp, xent_loss, xent_backward
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

// defines: adamw, add, accumulate, sum_squares
template <typename T>
void adamw(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWConfig& config, bool decay);
template <typename T>
void add(T* out, const T* a, const T* b, int64_t n);
template <typename T>
void accumulate(T* out, const T* in, int64_t n);
template <typename T>
double sum_squares(const T* data, int64_t n);

}  // namespace parplan::executor::cpu
