// CpuCompute: Compute over host memory; every op forwards to executor/cpu/cpu_ops.h.
#include "executor/cpu/cpu_compute.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>

#include "core/check.h"
#include "executor/cpu/cpu_ops.h"

namespace parplan::executor {

namespace {

template <typename T>
class CpuCompute final : public Compute<T> {
 public:
  const char* name() const override { return "cpu"; }
  bool synchronous() const override { return true; }

  ~CpuCompute() override {
    for (auto& [bytes, ptr] : cache_) std::free(ptr);
  }

  // A caching allocator (as PyTorch's): buffers of the sizes a step needs are reused from one
  // micro-batch to the next instead of being returned to the system, which would fault in
  // and zero fresh pages each time. The tracker still counts what is in use.
  void* allocate(std::size_t num_bytes) override {
    constexpr std::size_t kAlign = 64;
    const std::size_t rounded =
        (std::max<std::size_t>(num_bytes, 1) + kAlign - 1) / kAlign * kAlign;
    void* p = nullptr;
    if (auto it = cache_.find(rounded); it != cache_.end()) {
      p = it->second;
      cache_.erase(it);
    } else {
      p = std::aligned_alloc(kAlign, rounded);
      if (p == nullptr) {
        char size[32];
        std::snprintf(size, sizeof(size), "%.2f", static_cast<double>(rounded) / (1 << 30));
        throw Error(std::string("cannot allocate ") + size +
                    " GiB of host memory (the model or micro-batch is too large for this machine)");
      }
    }
    sizes_[p] = rounded;
    return p;
  }
  void release(void* ptr) noexcept override {
    auto it = sizes_.find(ptr);
    if (it == sizes_.end()) return;
    cache_.emplace(it->second, ptr);
    sizes_.erase(it);
  }
  void copy_to_device(void* dst, const void* src, std::size_t n) override {
    std::memcpy(dst, src, n);
  }
  void copy_to_host(void* dst, const void* src, std::size_t n) override {
    std::memcpy(dst, src, n);
  }
  void copy(void* dst, const void* src, std::size_t n) override { std::memmove(dst, src, n); }
  void set_zero(void* dst, std::size_t n) override { std::memset(dst, 0, n); }
  void synchronize() override {}

  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
            const T* b, int64_t ldb, T beta, T* c, int64_t ldc) override {
    cpu::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void add(T* out, const T* a, const T* b, int64_t n) override { cpu::add(out, a, b, n); }
  void accumulate(T* out, const T* in, int64_t n) override { cpu::accumulate(out, in, n); }
  double sum_squares(const T* data, int64_t n) override { return cpu::sum_squares(data, n); }

 private:
  std::unordered_multimap<std::size_t, void*> cache_;  // free buffers by size
  std::unordered_map<void*, std::size_t> sizes_;       // buffers in use

 public:
  void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b,
                         int64_t rows, int64_t width) override {
    cpu::layernorm_forward(out, mean, rstd, inp, w, b, rows, width);
  }
  void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w,
                          const T* mean, const T* rstd, int64_t rows, int64_t width) override {
    cpu::layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, rows, width);
  }
  void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* w, int64_t rows,
                       int64_t width) override {
    cpu::rmsnorm_forward(out, rstd, inp, w, rows, width);
  }
  void rmsnorm_backward(T* dinp, T* dw, const T* dout, const T* inp, const T* w, const T* rstd,
                        int64_t rows, int64_t width) override {
    cpu::rmsnorm_backward(dinp, dw, dout, inp, w, rstd, rows, width);
  }

  void gelu_forward(T* out, const T* inp, int64_t n) override { cpu::gelu_forward(out, inp, n); }
  void gelu_backward(T* dinp, const T* inp, const T* dout, int64_t n) override {
    cpu::gelu_backward(dinp, inp, dout, n);
  }
  void swiglu_forward(T* out, const T* inp, int64_t rows, int64_t ffn) override {
    cpu::swiglu_forward(out, inp, rows, ffn);
  }
  void swiglu_backward(T* dinp, const T* inp, const T* dout, int64_t rows, int64_t ffn) override {
    cpu::swiglu_backward(dinp, inp, dout, rows, ffn);
  }

  void rope(T* qkv, const AttentionShape& s, bool inverse) override { cpu::rope(qkv, s, inverse); }
  void attention_forward(T* out, T* lse, const T* qkv, const AttentionShape& s) override {
    cpu::attention_forward(out, lse, qkv, s);
  }
  void attention_backward(T* dqkv, T* /*scratch*/, const T* dout, const T* qkv, const T* lse,
                          const AttentionShape& s) override {
    cpu::attention_backward(dqkv, dout, qkv, lse, s);
  }
  int64_t attention_scratch_elements(const AttentionShape&) const override { return 0; }

  void embedding_forward(T* out, const int32_t* tokens, const T* wte, int64_t vocab_start,
                         int64_t vocab_local, int64_t rows, int64_t width) override {
    cpu::embedding_forward(out, tokens, wte, vocab_start, vocab_local, rows, width);
  }
  void embedding_backward(T* dwte, const T* dout, const int32_t* tokens, int64_t vocab_start,
                          int64_t vocab_local, int64_t rows, int64_t width) override {
    cpu::embedding_backward(dwte, dout, tokens, vocab_start, vocab_local, rows, width);
  }
  void position_forward(T* out, const T* wpe, int64_t first, int64_t seq_local, int64_t batch,
                        int64_t width) override {
    cpu::position_forward(out, wpe, first, seq_local, batch, width);
  }
  void position_backward(T* dwpe, const T* dout, int64_t first, int64_t seq_local, int64_t batch,
                         int64_t width) override {
    cpu::position_backward(dwpe, dout, first, seq_local, batch, width);
  }

  void xent_row_max(T* row_max, const T* logits, int64_t rows, int64_t vocab_local,
                    int64_t vocab_valid) override {
    cpu::xent_row_max(row_max, logits, rows, vocab_local, vocab_valid);
  }
  void xent_sum_exp(T* stats, const T* logits, const T* row_max, const int32_t* targets,
                    int64_t vocab_start, int64_t rows, int64_t vocab_local,
                    int64_t vocab_valid) override {
    cpu::xent_sum_exp(stats, logits, row_max, targets, vocab_start, rows, vocab_local, vocab_valid);
  }
  void xent_loss(T* losses, const T* row_max, const T* stats, int64_t rows) override {
    cpu::xent_loss(losses, row_max, stats, rows);
  }
  void xent_backward(T* logits, const T* row_max, const T* stats, const int32_t* targets,
                     int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid,
                     T dloss) override {
    cpu::xent_backward(logits, row_max, stats, targets, vocab_start, rows, vocab_local, vocab_valid,
                       dloss);
  }

  void adamw(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWConfig& config,
             bool decay) override {
    cpu::adamw(param, grad, m, v, n, config, decay);
  }
};

}  // namespace

template <typename T>
std::unique_ptr<Compute<T>> make_cpu_compute() {
  return std::make_unique<CpuCompute<T>>();
}

template std::unique_ptr<Compute<float>> make_cpu_compute<float>();
template std::unique_ptr<Compute<double>> make_cpu_compute<double>();

}  // namespace parplan::executor
