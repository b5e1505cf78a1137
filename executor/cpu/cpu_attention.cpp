// CPU reference attention: rotary embedding, and causal grouped-query attention that keeps
// only the log-sum-exp of each score row for the backward pass (the flash-attention
// recipe: Dao et al. 2022, Algorithm 1 and 4, without tiling). Per (batch, head) the score
// matrices are Eigen products on strided views of the sequence-major qkv rows.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "executor/cpu/cpu_ops.h"

namespace parplan::executor::cpu {

namespace {
template <typename T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const RowMat<T>, 0, Eigen::OuterStride<>>;
template <typename T>
using MutMap = Eigen::Map<RowMat<T>, 0, Eigen::OuterStride<>>;

// Views of one (batch, head) of the sequence-major buffers.
struct HeadOffsets {
  int64_t q, k, v, out;
};
HeadOffsets head_offsets(const AttentionShape& s, int64_t b, int64_t h) {
  const int64_t group = h / (s.heads / s.groups);
  const int64_t d = s.head_dim;
  return {b * s.qkv_width() + h * d, b * s.qkv_width() + (s.heads + group) * d,
          b * s.qkv_width() + (s.heads + s.groups + group) * d, b * s.heads * d + h * d};
}
}  // namespace

template <typename T>
void rope(T* qkv, const AttentionShape& s, bool inverse) {
  const int64_t d = s.head_dim;
  const int64_t half = d / 2;
  std::vector<T> cos_table(half);
  std::vector<T> sin_table(half);
  for (int64_t t = 0; t < s.seq; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(t) * std::pow(kRopeBase, -2.0 * static_cast<double>(i) / d);
      cos_table[i] = static_cast<T>(std::cos(angle));
      sin_table[i] = static_cast<T>(inverse ? -std::sin(angle) : std::sin(angle));
    }
    for (int64_t b = 0; b < s.batch; ++b) {
      T* row = qkv + (t * s.batch + b) * s.qkv_width();
      // q heads then k groups are consecutive head_dim blocks; v is left alone.
      for (int64_t head = 0; head < s.heads + s.groups; ++head) {
        T* x = row + head * d;
        for (int64_t i = 0; i < half; ++i) {
          const T x1 = x[i];
          const T x2 = x[i + half];
          x[i] = x1 * cos_table[i] - x2 * sin_table[i];
          x[i + half] = x2 * cos_table[i] + x1 * sin_table[i];
        }
      }
    }
  }
}

template <typename T>
void attention_forward(T* out, T* lse, const T* qkv, const AttentionShape& s) {
  const int64_t T_ = s.seq;
  const int64_t d = s.head_dim;
  const T scale = T(1) / std::sqrt(T(d));
  const int64_t qkv_stride = s.batch * s.qkv_width();
  const int64_t out_stride = s.batch * s.heads * d;
  RowMat<T> probs(T_, T_);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const HeadOffsets o = head_offsets(s, b, h);
      const ConstMap<T> q(qkv + o.q, T_, d, Eigen::OuterStride<>(qkv_stride));
      const ConstMap<T> k(qkv + o.k, T_, d, Eigen::OuterStride<>(qkv_stride));
      const ConstMap<T> v(qkv + o.v, T_, d, Eigen::OuterStride<>(qkv_stride));
      MutMap<T> y(out + o.out, T_, d, Eigen::OuterStride<>(out_stride));
      probs.noalias() = (q * k.transpose()) * scale;
      T* row_lse = lse + (b * s.heads + h) * T_;
      for (int64_t i = 0; i < T_; ++i) {
        T* p = probs.data() + i * T_;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j <= i; ++j) m = std::max(m, p[j]);
        T sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          p[j] = std::exp(p[j] - m);
          sum += p[j];
        }
        const T inv = T(1) / sum;
        for (int64_t j = 0; j <= i; ++j) p[j] *= inv;
        for (int64_t j = i + 1; j < T_; ++j) p[j] = T(0);
        row_lse[i] = m + std::log(sum);
      }
      y.noalias() = probs * v;
    }
  }
}

template <typename T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* lse,
                        const AttentionShape& s) {
  const int64_t T_ = s.seq;
  const int64_t d = s.head_dim;
  const T scale = T(1) / std::sqrt(T(d));
  const int64_t qkv_stride = s.batch * s.qkv_width();
  const int64_t out_stride = s.batch * s.heads * d;
  // k and v gradients add up over the heads of a group; q is written once per head.
  for (int64_t r = 0; r < s.rows(); ++r) {
    T* row = dqkv + r * s.qkv_width() + s.heads * d;
    std::fill(row, row + 2 * s.groups * d, T(0));
  }
  RowMat<T> probs(T_, T_);
  RowMat<T> dprobs(T_, T_);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const HeadOffsets o = head_offsets(s, b, h);
      const ConstMap<T> q(qkv + o.q, T_, d, Eigen::OuterStride<>(qkv_stride));
      const ConstMap<T> k(qkv + o.k, T_, d, Eigen::OuterStride<>(qkv_stride));
      const ConstMap<T> v(qkv + o.v, T_, d, Eigen::OuterStride<>(qkv_stride));
      const ConstMap<T> dy(dout + o.out, T_, d, Eigen::OuterStride<>(out_stride));
      MutMap<T> dq(dqkv + o.q, T_, d, Eigen::OuterStride<>(qkv_stride));
      MutMap<T> dk(dqkv + o.k, T_, d, Eigen::OuterStride<>(qkv_stride));
      MutMap<T> dv(dqkv + o.v, T_, d, Eigen::OuterStride<>(qkv_stride));
      // Recompute P from the saved log-sum-exp.
      probs.noalias() = (q * k.transpose()) * scale;
      const T* row_lse = lse + (b * s.heads + h) * T_;
      for (int64_t i = 0; i < T_; ++i) {
        T* p = probs.data() + i * T_;
        for (int64_t j = 0; j <= i; ++j) p[j] = std::exp(p[j] - row_lse[i]);
        for (int64_t j = i + 1; j < T_; ++j) p[j] = T(0);
      }
      dv.noalias() += probs.transpose() * dy;
      dprobs.noalias() = dy * v.transpose();
      // dS = P o (dP - rowsum(P o dP)), the softmax Jacobian.
      for (int64_t i = 0; i < T_; ++i) {
        const T* p = probs.data() + i * T_;
        T* dp = dprobs.data() + i * T_;
        T dot = 0;
        for (int64_t j = 0; j <= i; ++j) dot += p[j] * dp[j];
        for (int64_t j = 0; j <= i; ++j) dp[j] = p[j] * (dp[j] - dot) * scale;
        for (int64_t j = i + 1; j < T_; ++j) dp[j] = T(0);
      }
      dq.noalias() = dprobs * k;
      dk.noalias() += dprobs.transpose() * q;
    }
  }
}

#define PARPLAN_INSTANTIATE(T)                                                 \
  template void rope<T>(T*, const AttentionShape&, bool);                      \
  template void attention_forward<T>(T*, T*, const T*, const AttentionShape&); \
  template void attention_backward<T>(T*, const T*, const T*, const T*, const AttentionShape&);

PARPLAN_INSTANTIATE(float)
PARPLAN_INSTANTIATE(double)
#undef PARPLAN_INSTANTIATE

}  // namespace parplan::executor::cpu
