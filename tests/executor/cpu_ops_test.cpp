// The CPU reference ops (executor/cpu/cpu_ops.h) against closed forms, naive loops and
// central finite differences, in fp64.
#include "executor/cpu/cpu_ops.h"

#include <gtest/gtest.h>

#include <limits>

#include "tests/executor/test_util.h"

namespace parplan::executor {
namespace {

using testing::dot;
using testing::expect_gradient;
using testing::random_vector;
using V = std::vector<double>;

TEST(CpuOps, GemmMatchesNaiveLoopsForEveryTransposeAndStride) {
  const int64_t m = 5, n = 7, k = 4, pad = 3;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const int64_t lda = (ta ? m : k) + pad;
      const int64_t ldb = (tb ? k : n) + pad;
      const int64_t ldc = n + pad;
      const V a = random_vector((ta ? k : m) * lda, 1);
      const V b = random_vector((tb ? n : k) * ldb, 2);
      for (double beta : {0.0, 1.0, 0.5}) {
        V c = random_vector(m * ldc, 3);
        V expected = c;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p) {
              s += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
            }
            expected[i * ldc + j] = 2.0 * s + beta * c[i * ldc + j];
          }
        }
        cpu::gemm(ta, tb, m, n, k, 2.0, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            EXPECT_NEAR(c[i * ldc + j], expected[i * ldc + j], 1e-12) << ta << tb << beta;
          }
          // Padding columns are untouched.
          for (int64_t j = n; j < ldc; ++j) EXPECT_EQ(c[i * ldc + j], expected[i * ldc + j]);
        }
      }
    }
  }
}

TEST(CpuOps, LayerNormNormalisesAndHasExactGradients) {
  const int64_t rows = 3, width = 6;
  const V x = random_vector(rows * width, 4, 2.0);
  const V w = random_vector(width, 5);
  const V b = random_vector(width, 6);
  const V r = random_vector(rows * width, 7);  // dL/dout
  V out(rows * width), mean(rows), rstd(rows);
  const V ones(width, 1.0), zeros(width, 0.0);
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), ones.data(), zeros.data(),
                         rows, width);
  for (int64_t i = 0; i < rows; ++i) {
    double m = 0, var = 0;
    for (int64_t j = 0; j < width; ++j) m += out[i * width + j] / width;
    for (int64_t j = 0; j < width; ++j) var += out[i * width + j] * out[i * width + j] / width;
    EXPECT_NEAR(m, 0, 1e-12);
    EXPECT_NEAR(var, 1, 1e-4);  // eps = 1e-5 shrinks it slightly
  }
  auto loss = [&](const V& xx, const V& ww, const V& bb) {
    V o(rows * width), mu(rows), s(rows);
    cpu::layernorm_forward(o.data(), mu.data(), s.data(), xx.data(), ww.data(), bb.data(), rows,
                           width);
    return dot(o, r);
  };
  cpu::layernorm_forward(out.data(), mean.data(), rstd.data(), x.data(), w.data(), b.data(), rows,
                         width);
  V dx(rows * width, 0.5), dw(width, 0.25), db(width, 0.125);  // accumulate onto these
  cpu::layernorm_backward(dx.data(), dw.data(), db.data(), r.data(), x.data(), w.data(),
                          mean.data(), rstd.data(), rows, width);
  for (double& v : dx) v -= 0.5;
  for (double& v : dw) v -= 0.25;
  for (double& v : db) v -= 0.125;
  expect_gradient([&](const V& v) { return loss(v, w, b); }, x, dx);
  expect_gradient([&](const V& v) { return loss(x, v, b); }, w, dw);
  expect_gradient([&](const V& v) { return loss(x, w, v); }, b, db);
}

TEST(CpuOps, RmsNormHasUnitRmsAndExactGradients) {
  const int64_t rows = 3, width = 8;
  const V x = random_vector(rows * width, 8, 3.0);
  const V w = random_vector(width, 9);
  const V r = random_vector(rows * width, 10);
  V out(rows * width), rstd(rows);
  const V ones(width, 1.0);
  cpu::rmsnorm_forward(out.data(), rstd.data(), x.data(), ones.data(), rows, width);
  for (int64_t i = 0; i < rows; ++i) {
    double ms = 0;
    for (int64_t j = 0; j < width; ++j) ms += out[i * width + j] * out[i * width + j] / width;
    EXPECT_NEAR(ms, 1, 1e-5);
  }
  auto loss = [&](const V& xx, const V& ww) {
    V o(rows * width), s(rows);
    cpu::rmsnorm_forward(o.data(), s.data(), xx.data(), ww.data(), rows, width);
    return dot(o, r);
  };
  cpu::rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), rows, width);
  V dx(rows * width, 0.0), dw(width, 0.0);
  cpu::rmsnorm_backward(dx.data(), dw.data(), r.data(), x.data(), w.data(), rstd.data(), rows,
                        width);
  expect_gradient([&](const V& v) { return loss(v, w); }, x, dx);
  expect_gradient([&](const V& v) { return loss(x, v); }, w, dw);
}

TEST(CpuOps, GeluClosedFormsAndGradient) {
  V x = {0.0, 10.0, -10.0};
  V y(3);
  cpu::gelu_forward(y.data(), x.data(), 3);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 10.0, 1e-12);
  EXPECT_NEAR(y[2], 0.0, 1e-12);
  const V in = random_vector(20, 11, 2.0);
  const V r = random_vector(20, 12);
  V din(20);
  cpu::gelu_backward(din.data(), in.data(), r.data(), 20);
  expect_gradient(
      [&](const V& v) {
        V o(20);
        cpu::gelu_forward(o.data(), v.data(), 20);
        return dot(o, r);
      },
      in, din);
}

TEST(CpuOps, SwigluGradient) {
  const int64_t rows = 3, ffn = 4;
  const V in = random_vector(rows * 2 * ffn, 13, 2.0);
  const V r = random_vector(rows * ffn, 14);
  V din(rows * 2 * ffn);
  cpu::swiglu_backward(din.data(), in.data(), r.data(), rows, ffn);
  auto loss = [&](const V& v) {
    V o(rows * ffn);
    cpu::swiglu_forward(o.data(), v.data(), rows, ffn);
    return dot(o, r);
  };
  expect_gradient(loss, in, din);
  // silu(g) * u at g = 0 is 0; at large g it approaches g * u.
  V one = {0.0, 20.0, 3.0, 3.0};  // row: gate (0, 20) | up (3, 3)
  V o(2);
  cpu::swiglu_forward(o.data(), one.data(), 1, 2);
  EXPECT_EQ(o[0], 0.0);
  EXPECT_NEAR(o[1], 60.0, 1e-6);
}

AttentionShape small_shape() { return {5, 2, 4, 2, 4}; }  // T, B, heads, groups, d

// Naive causal GQA attention for one output element set.
V naive_attention(const V& qkv, const AttentionShape& s) {
  const int64_t d = s.head_dim, W = s.qkv_width();
  V out(s.rows() * s.heads * d, 0.0);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t g = h / (s.heads / s.groups);
      for (int64_t i = 0; i < s.seq; ++i) {
        std::vector<double> score(i + 1);
        double m = -1e300;
        for (int64_t j = 0; j <= i; ++j) {
          double dotp = 0;
          for (int64_t e = 0; e < d; ++e) {
            dotp += qkv[(i * s.batch + b) * W + h * d + e] *
                    qkv[(j * s.batch + b) * W + (s.heads + g) * d + e];
          }
          score[j] = dotp / std::sqrt(static_cast<double>(d));
          m = std::max(m, score[j]);
        }
        double sum = 0;
        for (double& v : score) sum += (v = std::exp(v - m));
        for (int64_t j = 0; j <= i; ++j) {
          for (int64_t e = 0; e < d; ++e) {
            out[(i * s.batch + b) * s.heads * d + h * d + e] +=
                score[j] / sum * qkv[(j * s.batch + b) * W + (s.heads + s.groups + g) * d + e];
          }
        }
      }
    }
  }
  return out;
}

TEST(CpuOps, AttentionMatchesNaiveCausalGqa) {
  const AttentionShape s = small_shape();
  const V qkv = random_vector(s.rows() * s.qkv_width(), 15);
  V out(s.rows() * s.heads * s.head_dim), lse(s.batch * s.heads * s.seq);
  cpu::attention_forward(out.data(), lse.data(), qkv.data(), s);
  const V expected = naive_attention(qkv, s);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-12);
  // The first position attends only to itself: its output is its own value vector.
  for (int64_t e = 0; e < s.head_dim; ++e) {
    EXPECT_NEAR(out[e], qkv[(s.heads + 0) * s.head_dim + s.groups * s.head_dim + e], 1e-12);
  }
}

TEST(CpuOps, AttentionBackwardMatchesFiniteDifferences) {
  const AttentionShape s = small_shape();
  const V qkv = random_vector(s.rows() * s.qkv_width(), 16);
  const V r = random_vector(s.rows() * s.heads * s.head_dim, 17);
  V out(r.size()), lse(s.batch * s.heads * s.seq), dqkv(qkv.size(), 42.0);
  cpu::attention_forward(out.data(), lse.data(), qkv.data(), s);
  cpu::attention_backward(dqkv.data(), r.data(), qkv.data(), lse.data(), s);
  expect_gradient(
      [&](const V& v) {
        V o(r.size()), l(lse.size());
        cpu::attention_forward(o.data(), l.data(), v.data(), s);
        return dot(o, r);
      },
      qkv, dqkv);
}

TEST(CpuOps, RopeIsARotationWithTransposeInverse) {
  const AttentionShape s = small_shape();
  const V x = random_vector(s.rows() * s.qkv_width(), 18);
  const V y = random_vector(x.size(), 19);
  V rx = x, ry = y;
  cpu::rope(rx.data(), s, false);
  cpu::rope(ry.data(), s, true);
  EXPECT_NEAR(dot(rx, y), dot(x, ry), 1e-10);  // <R x, y> = <x, R^T y>
  EXPECT_NEAR(dot(rx, rx), dot(x, x), 1e-10);  // norm preserving
  V back = rx;
  cpu::rope(back.data(), s, true);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(back[i], x[i], 1e-12);
  // Position 0 is unrotated; v columns are never touched.
  const int64_t W = s.qkv_width();
  for (int64_t j = 0; j < W; ++j) EXPECT_EQ(rx[j], x[j]);
  for (int64_t row = 0; row < s.rows(); ++row) {
    for (int64_t j = (s.heads + s.groups) * s.head_dim; j < W; ++j) {
      EXPECT_EQ(rx[row * W + j], x[row * W + j]);
    }
  }
}

TEST(CpuOps, VocabParallelEmbeddingShardsSumToTheFullLookup) {
  const int64_t vocab = 6, width = 3, rows = 4;
  const V wte = random_vector(vocab * width, 20);
  const std::vector<int32_t> tokens = {0, 5, 3, 3};
  V full(rows * width), shard0(rows * width), shard1(rows * width);
  cpu::embedding_forward(full.data(), tokens.data(), wte.data(), 0, vocab, rows, width);
  cpu::embedding_forward(shard0.data(), tokens.data(), wte.data(), 0, 3, rows, width);
  cpu::embedding_forward(shard1.data(), tokens.data(), wte.data() + 3 * width, 3, 3, rows, width);
  for (int64_t i = 0; i < rows * width; ++i) EXPECT_EQ(full[i], shard0[i] + shard1[i]);
  for (int64_t j = 0; j < width; ++j) EXPECT_EQ(full[1 * width + j], wte[5 * width + j]);
  const V dout = random_vector(rows * width, 21);
  V dwte(vocab * width, 0.0);
  cpu::embedding_backward(dwte.data(), dout.data(), tokens.data(), 0, vocab, rows, width);
  for (int64_t j = 0; j < width; ++j) {
    EXPECT_NEAR(dwte[3 * width + j], dout[2 * width + j] + dout[3 * width + j], 1e-15);
    EXPECT_EQ(dwte[1 * width + j], 0.0);
  }
}

TEST(CpuOps, PositionEmbeddingAddsByPositionAndSumsOverBatch) {
  const int64_t seq_local = 2, batch = 3, width = 2, first = 1;
  const V wpe = random_vector(4 * width, 22);
  V out(seq_local * batch * width, 1.0);
  cpu::position_forward(out.data(), wpe.data(), first, seq_local, batch, width);
  EXPECT_EQ(out[(1 * batch + 2) * width + 1], 1.0 + wpe[2 * width + 1]);
  const V dout = random_vector(out.size(), 23);
  V dwpe(4 * width, 0.0);
  cpu::position_backward(dwpe.data(), dout.data(), first, seq_local, batch, width);
  EXPECT_EQ(dwpe[0], 0.0);
  EXPECT_NEAR(dwpe[1 * width], dout[0] + dout[width * 1] + dout[width * 2], 1e-15);
}

// Cross-entropy over `shards` vocabulary shards, combining the statistics as the all-reduces
// of the tensor-parallel group do. Returns the losses.
V sharded_xent(const V& logits, const std::vector<int32_t>& targets, int64_t rows, int64_t vocab,
               int64_t shards, int64_t vocab_valid_total) {
  const int64_t vl = vocab / shards;
  std::vector<V> parts(shards, V(rows * vl));
  for (int64_t s = 0; s < shards; ++s) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < vl; ++j) parts[s][r * vl + j] = logits[r * vocab + s * vl + j];
    }
  }
  auto valid = [&](int64_t s) {
    return std::max<int64_t>(0, std::min(vl, vocab_valid_total - s * vl));
  };
  V row_max(rows, -std::numeric_limits<double>::infinity());
  for (int64_t s = 0; s < shards; ++s) {
    V m(rows);
    cpu::xent_row_max(m.data(), parts[s].data(), rows, vl, valid(s));
    for (int64_t r = 0; r < rows; ++r) row_max[r] = std::max(row_max[r], m[r]);
  }
  V stats(2 * rows, 0.0);
  for (int64_t s = 0; s < shards; ++s) {
    V st(2 * rows);
    cpu::xent_sum_exp(st.data(), parts[s].data(), row_max.data(), targets.data(), s * vl, rows, vl,
                      valid(s));
    for (int64_t i = 0; i < 2 * rows; ++i) stats[i] += st[i];
  }
  V losses(rows);
  cpu::xent_loss(losses.data(), row_max.data(), stats.data(), rows);
  return losses;
}

TEST(CpuOps, VocabParallelCrossEntropyEqualsLogSoftmax) {
  const int64_t rows = 3, vocab = 8;
  const V logits = random_vector(rows * vocab, 24, 3.0);
  const std::vector<int32_t> targets = {0, 7, 4};
  for (int64_t shards : {1, 2, 4}) {
    const V losses = sharded_xent(logits, targets, rows, vocab, shards, vocab);
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t j = 0; j < vocab; ++j) sum += std::exp(logits[r * vocab + j]);
      EXPECT_NEAR(losses[r], std::log(sum) - logits[r * vocab + targets[r]], 1e-12) << shards;
    }
  }
  // Padding columns (7 valid of 8) do not count.
  const V padded = sharded_xent(logits, {0, 6, 4}, rows, vocab, 2, 7);
  double sum = 0;
  for (int64_t j = 0; j < 7; ++j) sum += std::exp(logits[1 * vocab + j]);
  EXPECT_NEAR(padded[1], std::log(sum) - logits[1 * vocab + 6], 1e-12);
}

TEST(CpuOps, CrossEntropyBackwardMatchesFiniteDifferences) {
  const int64_t rows = 3, vocab = 6, valid = 5;
  const V logits = random_vector(rows * vocab, 25, 2.0);
  const std::vector<int32_t> targets = {1, 4, 0};
  const double dloss = 0.3;
  auto loss = [&](const V& l) {
    const V losses = sharded_xent(l, targets, rows, vocab, 1, valid);
    return dloss * (losses[0] + losses[1] + losses[2]);
  };
  V row_max(rows), stats(2 * rows);
  cpu::xent_row_max(row_max.data(), logits.data(), rows, vocab, valid);
  cpu::xent_sum_exp(stats.data(), logits.data(), row_max.data(), targets.data(), 0, rows, vocab,
                    valid);
  V grad = logits;
  cpu::xent_backward(grad.data(), row_max.data(), stats.data(), targets.data(), 0, rows, vocab,
                     valid, dloss);
  expect_gradient(loss, logits, grad);
  for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(grad[r * vocab + 5], 0.0);  // padding
}

TEST(CpuOps, AdamwFirstStepIsSignedLearningRate) {
  // Step 1: m_hat = g and v_hat = g^2, so the update is lr * (g / (|g| + eps) + wd * p).
  AdamWConfig c;
  c.lr = 0.01;
  c.weight_decay = 0.1;
  c.eps = 1e-8;
  V p = {1.0, -2.0, 0.5}, g = {0.3, -4.0, 0.0}, m(3, 0.0), v(3, 0.0);
  const V p0 = p;
  cpu::adamw(p.data(), g.data(), m.data(), v.data(), 3, c, true);
  for (int i = 0; i < 3; ++i) {
    const double expected =
        p0[i] - c.lr * (g[i] / (std::abs(g[i]) + c.eps) + c.weight_decay * p0[i]);
    EXPECT_NEAR(p[i], expected, 1e-12);
  }
  // Step 2 without decay, by the formula of Loshchilov & Hutter, Algorithm 2.
  const V p1 = p, m1 = m, v1 = v;
  const V g2 = {0.1, 0.2, -0.3};
  c.step = 2;
  cpu::adamw(p.data(), g2.data(), m.data(), v.data(), 3, c, false);
  for (int i = 0; i < 3; ++i) {
    const double mm = 0.9 * m1[i] + 0.1 * g2[i];
    const double vv = 0.95 * v1[i] + 0.05 * g2[i] * g2[i];
    const double expected =
        p1[i] - c.lr * (mm / (1 - 0.81)) / (std::sqrt(vv / (1 - 0.95 * 0.95)) + c.eps);
    EXPECT_NEAR(p[i], expected, 1e-12);
    EXPECT_NEAR(m[i], mm, 1e-15);
    EXPECT_NEAR(v[i], vv, 1e-15);
  }
}

TEST(CpuOps, FloatAndDoubleAgree) {
  const AttentionShape s = small_shape();
  const V qkv = random_vector(s.rows() * s.qkv_width(), 26);
  std::vector<float> qkv_f(qkv.begin(), qkv.end());
  V out(s.rows() * s.heads * s.head_dim), lse(s.batch * s.heads * s.seq);
  std::vector<float> out_f(out.size()), lse_f(lse.size());
  cpu::attention_forward(out.data(), lse.data(), qkv.data(), s);
  cpu::attention_forward(out_f.data(), lse_f.data(), qkv_f.data(), s);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out_f[i], out[i], 1e-5);
}

}  // namespace
}  // namespace parplan::executor
