// Compute: the executor's backend ops, one of its two plug points (the other is Comm).
// Implemented by the CPU reference (executor/cpu/, Eigen) and the CUDA backend
// (executor/cuda/, cuBLAS + our kernels). Conventions, as in llm.c:
//   - row-major; activations are (rows, width) with rows = t * B + b (sequence-major, so a
//     sequence-parallel shard is a contiguous block of rows);
//   - weight gradients are always accumulated (+=) so micro-batches add up; each op says
//     what it does to input gradients;
//   - pointers are in the backend's memory (host for CPU, device for CUDA).
// The CPU ops are tested against finite differences and closed forms in
// tests/executor/cpu_ops_test.cpp; each CUDA op against the CPU op in
// tests/gpu/executor_cuda_ops_gpu_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parplan::executor {

// Local attention shape: rows t * B + b of a qkv buffer whose row holds
// [q (heads * head_dim) | k (groups * head_dim) | v (groups * head_dim)].
struct AttentionShape {
  int64_t seq = 0;     // T (the full sequence: attention always sees every position)
  int64_t batch = 0;   // B
  int64_t heads = 0;   // query heads on this rank
  int64_t groups = 0;  // key/value heads on this rank; heads % groups == 0 (GQA)
  int64_t head_dim = 0;
  int64_t qkv_width() const { return (heads + 2 * groups) * head_dim; }
  int64_t rows() const { return seq * batch; }
};

struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  int64_t step = 1;  // 1-based, for bias correction
};

template <typename T>
class Compute {
 public:
  virtual ~Compute() = default;
  virtual const char* name() const = 0;
  // True when calls complete on return (CPU): per-op host timing is meaningful.
  virtual bool synchronous() const = 0;

  // ---- memory (bytes) ----
  virtual void* allocate(std::size_t num_bytes) = 0;
  // Never throws: it runs from destructors (~DeviceBuffer) and noexcept moves. A backend
  // keeps a failure for its next allocate or synchronize (executor/deferred_error.h).
  virtual void release(void* ptr) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* src, std::size_t num_bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t num_bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t num_bytes) = 0;
  virtual void set_zero(void* dst, std::size_t num_bytes) = 0;
  virtual void synchronize() = 0;

  // ---- dense algebra ----
  // C (m x n) = alpha * op(A) * op(B) + beta * C. op(A) is m x k; A is stored k x m when
  // trans_a. Leading dimensions are row strides in elements.
  virtual void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                    const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
                    int64_t ldc) = 0;

  // ---- elementwise ----
  virtual void add(T* out, const T* a, const T* b, int64_t n) = 0;  // out = a + b
  virtual void accumulate(T* out, const T* in, int64_t n) = 0;      // out += in
  virtual double sum_squares(const T* data, int64_t n) = 0;         // sum of x^2, in fp64
  // The sum of squares over count ranges (data[t], n[t]): by default sum_squares of each range
  // added in range order (the CPU's value, bit for bit); CUDA overrides it to accumulate all
  // ranges on the device and synchronise once (the gradient norm: one call per step).
  virtual double sum_squares_many(const T* const* data, const int64_t* n, int64_t count) {
    double sum = 0;
    for (int64_t t = 0; t < count; ++t) sum += sum_squares(data[t], n[t]);
    return sum;
  }

  // ---- normalisation over rows of width C ----
  virtual void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* weight,
                                 const T* bias, int64_t rows, int64_t width) = 0;
  // dinp, dweight, dbias +=
  virtual void layernorm_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp,
                                  const T* weight, const T* mean, const T* rstd, int64_t rows,
                                  int64_t width) = 0;
  virtual void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* weight, int64_t rows,
                               int64_t width) = 0;
  // dinp, dweight +=
  virtual void rmsnorm_backward(T* dinp, T* dweight, const T* dout, const T* inp, const T* weight,
                                const T* rstd, int64_t rows, int64_t width) = 0;

  // ---- activations ----
  virtual void gelu_forward(T* out, const T* inp, int64_t n) = 0;  // tanh approximation
  virtual void gelu_backward(T* dinp, const T* inp, const T* dout, int64_t n) = 0;  // dinp =
  // inp rows are [gate (F) | up (F)]; out = silu(gate) * up, rows of F.
  virtual void swiglu_forward(T* out, const T* inp, int64_t rows, int64_t ffn) = 0;
  virtual void swiglu_backward(T* dinp, const T* inp, const T* dout, int64_t rows,
                               int64_t ffn) = 0;  // dinp =

  // ---- attention ----
  // Rotary position embedding (rotate-half form, base 10000; Su et al. 2021, eq. 34) on the
  // q and k parts of qkv, in place; `inverse` applies the transpose (for gradients).
  virtual void rope(T* qkv, const AttentionShape& shape, bool inverse) = 0;
  // Causal softmax(q k^T / sqrt(d)) v per head; head h reads key/value group
  // h / (heads / groups). out: rows x heads*d; lse: (B, heads, T) log-sum-exp of each row,
  // kept for the backward pass instead of the probabilities (as flash attention does).
  virtual void attention_forward(T* out, T* lse, const T* qkv, const AttentionShape& shape) = 0;
  // dqkv = gradient (overwritten). scratch holds attention_scratch_elements(shape) elements.
  virtual void attention_backward(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* lse,
                                  const AttentionShape& shape) = 0;
  virtual int64_t attention_scratch_elements(const AttentionShape& shape) const = 0;

  // ---- embeddings (vocabulary-parallel, Megatron VocabParallelEmbedding) ----
  // out row n = wte[tokens[n] - vocab_start] when the token is in this rank's rows
  // [vocab_start, vocab_start + vocab_local), else 0.
  virtual void embedding_forward(T* out, const int32_t* tokens, const T* wte, int64_t vocab_start,
                                 int64_t vocab_local, int64_t rows, int64_t width) = 0;
  virtual void embedding_backward(T* dwte, const T* dout, const int32_t* tokens,
                                  int64_t vocab_start, int64_t vocab_local, int64_t rows,
                                  int64_t width) = 0;  // dwte +=
  // Rows t * B + b, t in [0, seq_local): out[row] += wpe[first_position + t].
  virtual void position_forward(T* out, const T* wpe, int64_t first_position, int64_t seq_local,
                                int64_t batch, int64_t width) = 0;
  virtual void position_backward(T* dwpe, const T* dout, int64_t first_position, int64_t seq_local,
                                 int64_t batch, int64_t width) = 0;  // +=

  // ---- vocabulary-parallel softmax cross-entropy (Megatron _VocabParallelCrossEntropy) ----
  // logits: rows x vocab_local, columns >= vocab_valid are padding and ignored. The caller
  // all-reduces row_max (max) and stats (sum) over the tensor-parallel group between calls.
  virtual void xent_row_max(T* row_max, const T* logits, int64_t rows, int64_t vocab_local,
                            int64_t vocab_valid) = 0;
  // stats[n] = sum_j exp(logit - row_max); stats[rows + n] = the target's logit if it is in
  // this rank's columns, else 0.
  virtual void xent_sum_exp(T* stats, const T* logits, const T* row_max, const int32_t* targets,
                            int64_t vocab_start, int64_t rows, int64_t vocab_local,
                            int64_t vocab_valid) = 0;
  // losses[n] = log(stats[n]) + row_max[n] - stats[rows + n]
  virtual void xent_loss(T* losses, const T* row_max, const T* stats, int64_t rows) = 0;
  // In place: logits <- dloss * (softmax - onehot(target)); padding columns get 0.
  virtual void xent_backward(T* logits, const T* row_max, const T* stats, const int32_t* targets,
                             int64_t vocab_start, int64_t rows, int64_t vocab_local,
                             int64_t vocab_valid, T dloss) = 0;

  // ---- optimizer ----
  // AdamW (Loshchilov & Hutter 2019, Algorithm 2) over n elements; decay false skips the
  // weight decay (norms).
  virtual void adamw(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWConfig& config,
                     bool decay) = 0;
};

}  // namespace parplan::executor
