// Every CUDA op (executor/cuda/) against the CPU reference op on the same random inputs, in
// fp64 (tolerance 1e-10 relative to the output scale) and fp32 (1e-4), and one training run
// of the whole model on the GPU against the CPU. Label gpu: registered only with
// PARPLAN_ENABLE_GPU_TESTS=ON on a machine with a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "executor/cpu/cpu_compute.h"
#include "executor/cuda/cuda_compute.h"
#include "executor/self_comm.h"
#include "executor/trainer.h"
#include "tests/executor/test_jobs.h"
#include "tests/executor/test_util.h"

namespace parplan::executor {
namespace {

template <typename T>
class CudaOps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU";
    gpu_ = make_cuda_compute<T>(0, 0);
    cpu_ = make_cpu_compute<T>();
  }
  void norms(int64_t rows, int64_t width);
  void attention(const AttentionShape& s);
  void TearDown() override {
    for (void* p : allocations_) gpu_->release(p);
    if (gpu_) gpu_->synchronize();
  }

  // A host vector and its device copy.
  struct Pair {
    std::vector<T> host;
    T* device;
  };
  Pair random(int64_t n, uint64_t seed, double scale = 1.0) {
    const auto v = testing::random_vector(n, seed, scale);
    return upload(std::vector<T>(v.begin(), v.end()));
  }
  Pair upload(std::vector<T> host) {
    T* d = static_cast<T*>(gpu_->allocate(host.size() * sizeof(T)));
    allocations_.push_back(d);
    gpu_->copy_to_device(d, host.data(), host.size() * sizeof(T));
    return {std::move(host), d};
  }
  int32_t* upload_tokens(const std::vector<int32_t>& tokens) {
    auto* d = static_cast<int32_t*>(gpu_->allocate(tokens.size() * sizeof(int32_t)));
    allocations_.push_back(d);
    gpu_->copy_to_device(d, tokens.data(), tokens.size() * sizeof(int32_t));
    return d;
  }
  // Compares the device buffer with the CPU result.
  void expect_same(const Pair& p, const char* what) {
    std::vector<T> back(p.host.size());
    gpu_->copy_to_host(back.data(), p.device, back.size() * sizeof(T));
    double scale = 1e-30;
    for (T v : p.host) scale = std::max(scale, std::abs(static_cast<double>(v)));
    const double tol = (sizeof(T) == 8 ? 1e-10 : 1e-4) * std::max(1.0, scale);
    for (std::size_t i = 0; i < back.size(); ++i) {
      ASSERT_NEAR(back[i], p.host[i], tol) << what << " element " << i;
    }
  }

  std::unique_ptr<Compute<T>> gpu_;
  std::unique_ptr<Compute<T>> cpu_;
  std::vector<void*> allocations_;
};

using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaOps, Types);

TYPED_TEST(CudaOps, Gemm) {
  using T = TypeParam;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const int64_t m = 37, n = 29, k = 41, pad = 3;
      const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
      auto a = this->random((ta ? k : m) * lda, 1);
      auto b = this->random((tb ? n : k) * ldb, 2);
      auto c = this->random(m * ldc, 3);
      this->gpu_->gemm(ta, tb, m, n, k, T(1), a.device, lda, b.device, ldb, T(1), c.device, ldc);
      this->cpu_->gemm(ta, tb, m, n, k, T(1), a.host.data(), lda, b.host.data(), ldb, T(1),
                       c.host.data(), ldc);
      this->expect_same(c, "gemm");
    }
  }
}

// Norm weight gradients reduce over rows in chunks of 128: one chunk, and several with a
// partial last one.
TYPED_TEST(CudaOps, NormsForwardAndBackward) {
  for (const auto& [rows, width] :
       {std::pair<int64_t, int64_t>{19, 300}, std::pair<int64_t, int64_t>{517, 70}}) {
    this->norms(rows, width);
    if (this->HasFatalFailure()) return;
  }
}

template <typename T>
void CudaOps<T>::norms(int64_t rows, int64_t width) {
  auto x = random(rows * width, 4, 2.0);
  auto w = random(width, 5);
  auto b = random(width, 6);
  auto dy = random(rows * width, 7);
  auto out = random(rows * width, 8), mean = random(rows, 9), rstd = random(rows, 10);
  gpu_->layernorm_forward(out.device, mean.device, rstd.device, x.device, w.device, b.device, rows,
                          width);
  cpu_->layernorm_forward(out.host.data(), mean.host.data(), rstd.host.data(), x.host.data(),
                          w.host.data(), b.host.data(), rows, width);
  expect_same(out, "layernorm out");
  expect_same(rstd, "layernorm rstd");
  auto dx = random(rows * width, 11), dw = random(width, 12), db = random(width, 13);
  gpu_->layernorm_backward(dx.device, dw.device, db.device, dy.device, x.device, w.device,
                           mean.device, rstd.device, rows, width);
  cpu_->layernorm_backward(dx.host.data(), dw.host.data(), db.host.data(), dy.host.data(),
                           x.host.data(), w.host.data(), mean.host.data(), rstd.host.data(), rows,
                           width);
  expect_same(dx, "layernorm dx");
  expect_same(dw, "layernorm dweight");
  expect_same(db, "layernorm dbias");
  gpu_->rmsnorm_forward(out.device, rstd.device, x.device, w.device, rows, width);
  cpu_->rmsnorm_forward(out.host.data(), rstd.host.data(), x.host.data(), w.host.data(), rows,
                        width);
  expect_same(out, "rmsnorm out");
  gpu_->rmsnorm_backward(dx.device, dw.device, dy.device, x.device, w.device, rstd.device, rows,
                         width);
  cpu_->rmsnorm_backward(dx.host.data(), dw.host.data(), dy.host.data(), x.host.data(),
                         w.host.data(), rstd.host.data(), rows, width);
  expect_same(dx, "rmsnorm dx");
  expect_same(dw, "rmsnorm dweight");
}

TYPED_TEST(CudaOps, Activations) {
  const int64_t rows = 13, ffn = 70;
  auto in = this->random(rows * 2 * ffn, 14, 2.0);
  auto dy = this->random(rows * 2 * ffn, 15);
  auto out = this->random(rows * 2 * ffn, 16), din = this->random(rows * 2 * ffn, 17);
  this->gpu_->gelu_forward(out.device, in.device, rows * 2 * ffn);
  this->cpu_->gelu_forward(out.host.data(), in.host.data(), rows * 2 * ffn);
  this->expect_same(out, "gelu");
  this->gpu_->gelu_backward(din.device, in.device, dy.device, rows * 2 * ffn);
  this->cpu_->gelu_backward(din.host.data(), in.host.data(), dy.host.data(), rows * 2 * ffn);
  this->expect_same(din, "gelu backward");
  this->gpu_->swiglu_forward(out.device, in.device, rows, ffn);
  this->cpu_->swiglu_forward(out.host.data(), in.host.data(), rows, ffn);
  this->expect_same(out, "swiglu");
  this->gpu_->swiglu_backward(din.device, in.device, dy.device, rows, ffn);
  this->cpu_->swiglu_backward(din.host.data(), in.host.data(), dy.host.data(), rows, ffn);
  this->expect_same(din, "swiglu backward");
}

// Shapes for the tiled (FlashAttention-2, 32-row tiles) kernels: T below, above and not a
// multiple of the tile; one, two and all heads per key/value group; head_dim 16 to 128 (48:
// not a multiple of the warp); and head_dim 160, which takes the per-row fallback.
TYPED_TEST(CudaOps, AttentionAndRope) {
  for (const AttentionShape s : {
           AttentionShape{33, 3, 4, 2, 16},
           AttentionShape{64, 1, 2, 1, 64},
           AttentionShape{1, 2, 2, 1, 32},
           AttentionShape{20, 2, 6, 1, 128},
           AttentionShape{45, 2, 4, 4, 32},
           AttentionShape{70, 1, 4, 2, 64},
           AttentionShape{97, 1, 2, 1, 128},
           AttentionShape{64, 2, 3, 3, 48},
           AttentionShape{9, 1, 2, 1, 160},
       }) {
    SCOPED_TRACE(::testing::Message() << "T=" << s.seq << " B=" << s.batch << " heads=" << s.heads
                                      << " groups=" << s.groups << " d=" << s.head_dim);
    this->attention(s);
    if (this->HasFatalFailure()) return;
  }
}

template <typename T>
void CudaOps<T>::attention(const AttentionShape& s) {
  auto qkv = random(s.rows() * s.qkv_width(), 18);
  gpu_->rope(qkv.device, s, false);
  cpu_->rope(qkv.host.data(), s, false);
  expect_same(qkv, "rope");
  auto out = random(s.rows() * s.heads * s.head_dim, 19);
  auto lse = random(s.batch * s.heads * s.seq, 20);
  gpu_->attention_forward(out.device, lse.device, qkv.device, s);
  cpu_->attention_forward(out.host.data(), lse.host.data(), qkv.host.data(), s);
  expect_same(out, "attention out");
  expect_same(lse, "attention lse");
  auto dy = random(out.host.size(), 21);
  auto dqkv = random(qkv.host.size(), 22);
  const int64_t scratch_elements = gpu_->attention_scratch_elements(s);
  if (s.head_dim <= 128) {  // the tiled path keeps only D, not P and dS
    EXPECT_EQ(scratch_elements, s.batch * s.heads * s.seq);
  }
  auto scratch = random(std::max<int64_t>(scratch_elements, 1), 23);
  gpu_->attention_backward(dqkv.device, scratch.device, dy.device, qkv.device, lse.device, s);
  cpu_->attention_backward(dqkv.host.data(), nullptr, dy.host.data(), qkv.host.data(),
                           lse.host.data(), s);
  expect_same(dqkv, "attention dqkv");
  // Deterministic: a second backward gives the same bits.
  std::vector<T> first(dqkv.host.size()), second(dqkv.host.size());
  gpu_->copy_to_host(first.data(), dqkv.device, first.size() * sizeof(T));
  gpu_->attention_backward(dqkv.device, scratch.device, dy.device, qkv.device, lse.device, s);
  gpu_->copy_to_host(second.data(), dqkv.device, second.size() * sizeof(T));
  ASSERT_EQ(first, second) << "attention backward is not deterministic";
  gpu_->rope(dqkv.device, s, true);
  cpu_->rope(dqkv.host.data(), s, true);
  expect_same(dqkv, "rope inverse");
}

TYPED_TEST(CudaOps, EmbeddingsAndCrossEntropy) {
  using T = TypeParam;
  const int64_t rows = 24, width = 40, vocab_local = 50, vocab_start = 50, valid = 47;
  std::vector<int32_t> tokens(rows);
  for (int64_t r = 0; r < rows; ++r) tokens[r] = static_cast<int32_t>((r * 37) % 100);
  int32_t* tokens_d = this->upload_tokens(tokens);
  auto wte = this->random(vocab_local * width, 24);
  auto out = this->random(rows * width, 25);
  this->gpu_->embedding_forward(out.device, tokens_d, wte.device, vocab_start, vocab_local, rows,
                                width);
  this->cpu_->embedding_forward(out.host.data(), tokens.data(), wte.host.data(), vocab_start,
                                vocab_local, rows, width);
  this->expect_same(out, "embedding");
  auto dwte = this->random(vocab_local * width, 26);
  this->gpu_->embedding_backward(dwte.device, out.device, tokens_d, vocab_start, vocab_local, rows,
                                 width);
  this->cpu_->embedding_backward(dwte.host.data(), out.host.data(), tokens.data(), vocab_start,
                                 vocab_local, rows, width);
  this->expect_same(dwte, "embedding backward");
  auto wpe = this->random(8 * width, 27);
  this->gpu_->position_forward(out.device, wpe.device, 2, 6, 4, width);
  this->cpu_->position_forward(out.host.data(), wpe.host.data(), 2, 6, 4, width);
  this->expect_same(out, "position");
  this->gpu_->position_backward(wpe.device, out.device, 2, 6, 4, width);
  this->cpu_->position_backward(wpe.host.data(), out.host.data(), 2, 6, 4, width);
  this->expect_same(wpe, "position backward");

  auto logits = this->random(rows * vocab_local, 28, 3.0);
  auto row_max = this->random(rows, 29), stats = this->random(2 * rows, 30),
       losses = this->random(rows, 31);
  this->gpu_->xent_row_max(row_max.device, logits.device, rows, vocab_local, valid);
  this->cpu_->xent_row_max(row_max.host.data(), logits.host.data(), rows, vocab_local, valid);
  this->expect_same(row_max, "xent row max");
  this->gpu_->xent_sum_exp(stats.device, logits.device, row_max.device, tokens_d, vocab_start, rows,
                           vocab_local, valid);
  this->cpu_->xent_sum_exp(stats.host.data(), logits.host.data(), row_max.host.data(),
                           tokens.data(), vocab_start, rows, vocab_local, valid);
  this->expect_same(stats, "xent stats");
  this->gpu_->xent_loss(losses.device, row_max.device, stats.device, rows);
  this->cpu_->xent_loss(losses.host.data(), row_max.host.data(), stats.host.data(), rows);
  this->expect_same(losses, "xent loss");
  this->gpu_->xent_backward(logits.device, row_max.device, stats.device, tokens_d, vocab_start,
                            rows, vocab_local, valid, T(0.25));
  this->cpu_->xent_backward(logits.host.data(), row_max.host.data(), stats.host.data(),
                            tokens.data(), vocab_start, rows, vocab_local, valid, T(0.25));
  this->expect_same(logits, "xent backward");
}

// Many repeats of few tokens (and tokens of other ranks): the sorted, per-token sums.
TYPED_TEST(CudaOps, EmbeddingBackwardRepeatedTokens) {
  using T = TypeParam;
  const int64_t rows = 700, width = 150, vocab_local = 37, vocab_start = 11;
  std::vector<int32_t> tokens(rows);
  for (int64_t r = 0; r < rows; ++r) tokens[r] = static_cast<int32_t>((r * r * 7 + 3) % 60);
  tokens[5] = 11;  // the first and last local rows
  tokens[6] = 47;
  int32_t* tokens_d = this->upload_tokens(tokens);
  auto dout = this->random(rows * width, 40);
  auto dwte = this->random(vocab_local * width, 41);
  std::vector<T> before(dwte.host);
  this->gpu_->embedding_backward(dwte.device, dout.device, tokens_d, vocab_start, vocab_local, rows,
                                 width);
  this->cpu_->embedding_backward(dwte.host.data(), dout.host.data(), tokens.data(), vocab_start,
                                 vocab_local, rows, width);
  this->expect_same(dwte, "embedding backward, repeated tokens");
  auto again = this->upload(before);
  this->gpu_->embedding_backward(again.device, dout.device, tokens_d, vocab_start, vocab_local,
                                 rows, width);
  std::vector<T> first(dwte.host.size()), second(dwte.host.size());
  this->gpu_->copy_to_host(first.data(), dwte.device, first.size() * sizeof(T));
  this->gpu_->copy_to_host(second.data(), again.device, second.size() * sizeof(T));
  EXPECT_EQ(first, second) << "embedding backward is not deterministic";
  // Position backward over more rows than one block.
  const int64_t seq_local = 40, batch = 3, first_position = 5;
  auto dpos = this->random(seq_local * batch * width, 42);
  auto dwpe = this->random((first_position + seq_local) * width, 43);
  this->gpu_->position_backward(dwpe.device, dpos.device, first_position, seq_local, batch, width);
  this->cpu_->position_backward(dwpe.host.data(), dpos.host.data(), first_position, seq_local,
                                batch, width);
  this->expect_same(dwpe, "position backward");
}

// The gradient norm's one-sync sum over ranges (some empty) against the per-range sums.
TYPED_TEST(CudaOps, SumSquaresMany) {
  auto x = this->random(300000, 44);
  const std::vector<int64_t> offsets{0, 7, 7, 1000, 263000, 299999};
  const std::vector<int64_t> sizes{7, 0, 993, 262000, 36999, 1};
  std::vector<const TypeParam*> device_ranges, host_ranges;
  double gpu_per_range = 0, cpu_per_range = 0;
  for (std::size_t t = 0; t < sizes.size(); ++t) {
    device_ranges.push_back(x.device + offsets[t]);
    host_ranges.push_back(x.host.data() + offsets[t]);
    gpu_per_range += this->gpu_->sum_squares(x.device + offsets[t], sizes[t]);
    cpu_per_range += this->cpu_->sum_squares(x.host.data() + offsets[t], sizes[t]);
  }
  const auto count = static_cast<int64_t>(sizes.size());
  const double gpu_many = this->gpu_->sum_squares_many(device_ranges.data(), sizes.data(), count);
  const double cpu_many = this->cpu_->sum_squares_many(host_ranges.data(), sizes.data(), count);
  EXPECT_EQ(cpu_many, cpu_per_range);  // bit for bit: the CPU loss must not move
  EXPECT_EQ(gpu_many, gpu_per_range);  // same partials, same order
  EXPECT_NEAR(gpu_many, cpu_many, 1e-9 * cpu_many);
  EXPECT_EQ(this->gpu_->sum_squares_many(device_ranges.data(), sizes.data(), 0), 0.0);
}

TYPED_TEST(CudaOps, OptimizerAndElementwise) {
  const int64_t n = 1000;
  auto p = this->random(n, 32), g = this->random(n, 33), m = this->random(n, 34, 0.1);
  auto v = this->upload(std::vector<TypeParam>(n, TypeParam(0.01)));
  AdamWConfig c;
  c.step = 3;
  this->gpu_->adamw(p.device, g.device, m.device, v.device, n, c, true);
  this->cpu_->adamw(p.host.data(), g.host.data(), m.host.data(), v.host.data(), n, c, true);
  this->expect_same(p, "adamw param");
  this->expect_same(m, "adamw m");
  this->expect_same(v, "adamw v");
  auto out = this->random(n, 35);
  this->gpu_->add(out.device, p.device, g.device, n);
  this->cpu_->add(out.host.data(), p.host.data(), g.host.data(), n);
  this->gpu_->accumulate(out.device, m.device, n);
  this->cpu_->accumulate(out.host.data(), m.host.data(), n);
  this->expect_same(out, "add + accumulate");
  const double expected = this->cpu_->sum_squares(out.host.data(), n);
  EXPECT_NEAR(this->gpu_->sum_squares(out.device, n), expected, 1e-5 * expected);
}

// The whole model on one GPU against the CPU: 3 training steps, same losses.
template <typename T>
std::vector<double> train(Compute<T>& compute, const Job& job) {
  auto world = make_self_comm();
  PhaseTimer timer([&compute] { compute.synchronize(); }, false, "rank 0", "stage 0");
  Trainer<T> trainer(job, TrainerOptions{5, {}}, *world, compute, timer);
  std::vector<double> losses;
  for (int64_t s = 0; s < 3; ++s) losses.push_back(trainer.step(s).loss);
  return losses;
}

TEST(CudaModel, TrainingStepsMatchTheCpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU";
  for (const std::string flavour : {"gpt", "llama"}) {
    const Job job =
        testing::tiny_job({{"micro_batch_size", 2}, {"recompute", "selective"}}, flavour);
    auto gpu = make_cuda_compute<double>(0, 0);
    auto cpu = make_cpu_compute<double>();
    const auto on_gpu = train(*gpu, job);
    const auto on_cpu = train(*cpu, job);
    for (int s = 0; s < 3; ++s) EXPECT_NEAR(on_gpu[s], on_cpu[s], 1e-9 * on_cpu[s]) << flavour;
    auto gpu32 = make_cuda_compute<float>(0, 0);
    auto cpu32 = make_cpu_compute<float>();
    const auto f_gpu = train(*gpu32, job);
    const auto f_cpu = train(*cpu32, job);
    for (int s = 0; s < 3; ++s) EXPECT_NEAR(f_gpu[s], f_cpu[s], 1e-4 * f_cpu[s]) << flavour;
  }
}

}  // namespace
}  // namespace parplan::executor
