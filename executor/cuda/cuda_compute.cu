// CudaCompute: Compute on one GPU. Memory from the stream-ordered allocator
// (cudaMallocAsync) on the legacy default stream; GEMMs through cuBLAS (row-major operands
// passed as their column-major transposes); everything else in cuda_kernels.cu and
// cuda_attention.cu.
#include <climits>
#include <memory>

#include "core/gpu_assignment.h"
#include "executor/cuda/cuda_common.cuh"
#include "executor/cuda/cuda_compute.h"
#include "executor/cuda/cuda_kernels.cuh"
#include "executor/deferred_error.h"

namespace parplan::executor {

namespace {

template <typename T>
void cublas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                 const T* alpha, const T* a, int lda, const T* b, int ldb, const T* beta, T* c,
                 int ldc);
template <>
void cublas_gemm<float>(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                        int k, const float* alpha, const float* a, int lda, const float* b, int ldb,
                        const float* beta, float* c, int ldc) {
  PARPLAN_CUBLAS_CHECK(cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
}
template <>
void cublas_gemm<double>(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                         int k, const double* alpha, const double* a, int lda, const double* b,
                         int ldb, const double* beta, double* c, int ldc) {
  PARPLAN_CUBLAS_CHECK(cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
}

int checked_int(int64_t v) {
  PARPLAN_CHECK(v <= INT_MAX, "GEMM dimension ", v, " exceeds cuBLAS's 32-bit int");
  return static_cast<int>(v);
}

template <typename T>
class CudaCompute final : public Compute<T> {
 public:
  explicit CudaCompute(int device) {
    PARPLAN_CUDA_CHECK(cudaSetDevice(device));
    PARPLAN_CUBLAS_CHECK(cublasCreate(&cublas_));
    PARPLAN_CUBLAS_CHECK(cublasSetStream(cublas_, 0));
    // Keep freed blocks in the stream-ordered pool instead of returning them at every sync:
    // activations of the same sizes come back each micro-batch.
    cudaMemPool_t pool = nullptr;
    PARPLAN_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t keep = UINT64_MAX;
    PARPLAN_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  ~CudaCompute() override { cublasDestroy(cublas_); }

  const char* name() const override { return "cuda"; }
  bool synchronous() const override { return false; }

  void* allocate(std::size_t num_bytes) override {
    release_error_.rethrow_if_pending();
    void* p = nullptr;
    PARPLAN_CUDA_CHECK(cudaMallocAsync(&p, num_bytes > 0 ? num_bytes : 1, 0));
    return p;
  }
  void release(void* ptr) noexcept override {
    const cudaError_t status = cudaFreeAsync(ptr, 0);
    if (status != cudaSuccess) release_error_.record("cudaFreeAsync", cudaGetErrorString(status));
  }
  void copy_to_device(void* dst, const void* src, std::size_t n) override {
    PARPLAN_CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
  }
  void copy_to_host(void* dst, const void* src, std::size_t n) override {
    release_error_.rethrow_if_pending();
    PARPLAN_CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
  }
  void copy(void* dst, const void* src, std::size_t n) override {
    PARPLAN_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, 0));
  }
  void set_zero(void* dst, std::size_t n) override {
    PARPLAN_CUDA_CHECK(cudaMemsetAsync(dst, 0, n, 0));
  }
  void synchronize() override {
    release_error_.rethrow_if_pending();
    PARPLAN_CUDA_CHECK(cudaStreamSynchronize(0));
  }

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
            const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    cublas_gemm<T>(cublas_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                   checked_int(n), checked_int(m), checked_int(k), &alpha, b, checked_int(ldb), a,
                   checked_int(lda), &beta, c, checked_int(ldc));
  }
  void add(T* out, const T* a, const T* b, int64_t n) override { cuda::add(out, a, b, n); }
  void accumulate(T* out, const T* in, int64_t n) override { cuda::accumulate(out, in, n); }
  double sum_squares(const T* data, int64_t n) override { return cuda::sum_squares(data, n); }
  double sum_squares_many(const T* const* data, const int64_t* n, int64_t count) override {
    return cuda::sum_squares_many(data, n, count);
  }

  void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b,
                         int64_t rows, int64_t width) override {
    cuda::layernorm_forward(out, mean, rstd, inp, w, b, rows, width);
  }
  void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w,
                          const T* mean, const T* rstd, int64_t rows, int64_t width) override {
    cuda::layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, rows, width);
  }
  void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* w, int64_t rows,
                       int64_t width) override {
    cuda::rmsnorm_forward(out, rstd, inp, w, rows, width);
  }
  void rmsnorm_backward(T* dinp, T* dw, const T* dout, const T* inp, const T* w, const T* rstd,
                        int64_t rows, int64_t width) override {
    cuda::rmsnorm_backward(dinp, dw, dout, inp, w, rstd, rows, width);
  }
  void gelu_forward(T* out, const T* inp, int64_t n) override { cuda::gelu_forward(out, inp, n); }
  void gelu_backward(T* dinp, const T* inp, const T* dout, int64_t n) override {
    cuda::gelu_backward(dinp, inp, dout, n);
  }
  void swiglu_forward(T* out, const T* inp, int64_t rows, int64_t ffn) override {
    cuda::swiglu_forward(out, inp, rows, ffn);
  }
  void swiglu_backward(T* dinp, const T* inp, const T* dout, int64_t rows, int64_t ffn) override {
    cuda::swiglu_backward(dinp, inp, dout, rows, ffn);
  }
  void rope(T* qkv, const AttentionShape& s, bool inverse) override { cuda::rope(qkv, s, inverse); }
  void attention_forward(T* out, T* lse, const T* qkv, const AttentionShape& s) override {
    cuda::attention_forward(out, lse, qkv, s);
  }
  void attention_backward(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* lse,
                          const AttentionShape& s) override {
    cuda::attention_backward(dqkv, scratch, dout, qkv, lse, s);
  }
  int64_t attention_scratch_elements(const AttentionShape& s) const override {
    return cuda::attention_scratch_elements<T>(s);
  }
  void embedding_forward(T* out, const int32_t* tokens, const T* wte, int64_t vocab_start,
                         int64_t vocab_local, int64_t rows, int64_t width) override {
    cuda::embedding_forward(out, tokens, wte, vocab_start, vocab_local, rows, width);
  }
  void embedding_backward(T* dwte, const T* dout, const int32_t* tokens, int64_t vocab_start,
                          int64_t vocab_local, int64_t rows, int64_t width) override {
    cuda::embedding_backward(dwte, dout, tokens, vocab_start, vocab_local, rows, width);
  }
  void position_forward(T* out, const T* wpe, int64_t first, int64_t seq_local, int64_t batch,
                        int64_t width) override {
    cuda::position_forward(out, wpe, first, seq_local, batch, width);
  }
  void position_backward(T* dwpe, const T* dout, int64_t first, int64_t seq_local, int64_t batch,
                         int64_t width) override {
    cuda::position_backward(dwpe, dout, first, seq_local, batch, width);
  }
  void xent_row_max(T* row_max, const T* logits, int64_t rows, int64_t vocab_local,
                    int64_t vocab_valid) override {
    cuda::xent_row_max(row_max, logits, rows, vocab_local, vocab_valid);
  }
  void xent_sum_exp(T* stats, const T* logits, const T* row_max, const int32_t* targets,
                    int64_t vocab_start, int64_t rows, int64_t vocab_local,
                    int64_t vocab_valid) override {
    cuda::xent_sum_exp(stats, logits, row_max, targets, vocab_start, rows, vocab_local,
                       vocab_valid);
  }
  void xent_loss(T* losses, const T* row_max, const T* stats, int64_t rows) override {
    cuda::xent_loss(losses, row_max, stats, rows);
  }
  void xent_backward(T* logits, const T* row_max, const T* stats, const int32_t* targets,
                     int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid,
                     T dloss) override {
    cuda::xent_backward(logits, row_max, stats, targets, vocab_start, rows, vocab_local,
                        vocab_valid, dloss);
  }
  void adamw(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWConfig& config,
             bool decay) override {
    cuda::adamw(param, grad, m, v, n, config, decay);
  }

 private:
  cublasHandle_t cublas_ = nullptr;
  DeferredError release_error_;  // a failed cudaFreeAsync, thrown by the next allocate/sync
};

}  // namespace

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

template <typename T>
std::unique_ptr<Compute<T>> make_cuda_compute(int host_rank, int node_local_rank) {
  const int count = cuda_device_count();
  PARPLAN_CHECK(count > 0, "rank ", host_rank, ": backend cuda: no CUDA device is visible");
  return std::make_unique<CudaCompute<T>>(gpu_of_rank(node_local_rank, count));
}

template std::unique_ptr<Compute<float>> make_cuda_compute<float>(int, int);
template std::unique_ptr<Compute<double>> make_cuda_compute<double>(int, int);

}  // namespace parplan::executor
