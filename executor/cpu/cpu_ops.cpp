// CPU reference ops except attention (cpu_attention.cpp). Formulas follow llm.c's
// train_gpt2.c (layernorm, gelu, encoder, crossentropy) and Megatron-Core for the
// vocabulary-parallel parts; shapes and conventions are documented in executor/compute.h.
#include "executor/cpu/cpu_ops.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "executor/op_math.h"

namespace parplan::executor::cpu {

namespace {
template <typename T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const RowMat<T>, 0, Eigen::OuterStride<>>;
template <typename T>
using MutMap = Eigen::Map<RowMat<T>, 0, Eigen::OuterStride<>>;

template <typename T, typename Product>
void store(MutMap<T>& c, const Product& product, T alpha, T beta) {
  if (beta == T(0)) {
    c.noalias() = alpha * product;
  } else {
    if (beta != T(1)) c *= beta;
    c.noalias() += alpha * product;
  }
}
}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  MutMap<T> cm(c, m, n, Eigen::OuterStride<>(ldc));
  if (k == 0) {
    if (beta == T(0))
      cm.setZero();
    else
      cm *= beta;
    return;
  }
  const ConstMap<T> am(a, trans_a ? k : m, trans_a ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap<T> bm(b, trans_b ? n : k, trans_b ? k : n, Eigen::OuterStride<>(ldb));
  if (!trans_a && !trans_b) store(cm, am * bm, alpha, beta);
  if (!trans_a && trans_b) store(cm, am * bm.transpose(), alpha, beta);
  if (trans_a && !trans_b) store(cm, am.transpose() * bm, alpha, beta);
  if (trans_a && trans_b) store(cm, am.transpose() * bm.transpose(), alpha, beta);
}

template <typename T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* weight, const T* bias,
                       int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = inp + r * width;
    T sum = 0;
    for (int64_t i = 0; i < width; ++i) sum += x[i];
    const T mu = sum / T(width);
    T var = 0;
    for (int64_t i = 0; i < width; ++i) var += (x[i] - mu) * (x[i] - mu);
    const T s = T(1) / std::sqrt(var / T(width) + T(kNormEps));
    T* o = out + r * width;
    for (int64_t i = 0; i < width; ++i) o[i] = (x[i] - mu) * s * weight[i] + bias[i];
    mean[r] = mu;
    rstd[r] = s;
  }
}

template <typename T>
void layernorm_backward(T* dinp, T* dweight, T* dbias, const T* dout, const T* inp, const T* weight,
                        const T* mean, const T* rstd, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = inp + r * width;
    const T* dy = dout + r * width;
    T* dx = dinp + r * width;
    const T mu = mean[r];
    const T s = rstd[r];
    T dnorm_mean = 0;
    T dnorm_norm_mean = 0;
    for (int64_t i = 0; i < width; ++i) {
      const T norm = (x[i] - mu) * s;
      const T dnorm = weight[i] * dy[i];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= T(width);
    dnorm_norm_mean /= T(width);
    for (int64_t i = 0; i < width; ++i) {
      const T norm = (x[i] - mu) * s;
      const T dnorm = weight[i] * dy[i];
      dbias[i] += dy[i];
      dweight[i] += norm * dy[i];
      dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
  }
}

template <typename T>
void rmsnorm_forward(T* out, T* rstd, const T* inp, const T* weight, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = inp + r * width;
    T sum = 0;
    for (int64_t i = 0; i < width; ++i) sum += x[i] * x[i];
    const T s = T(1) / std::sqrt(sum / T(width) + T(kNormEps));
    T* o = out + r * width;
    for (int64_t i = 0; i < width; ++i) o[i] = x[i] * s * weight[i];
    rstd[r] = s;
  }
}

template <typename T>
void rmsnorm_backward(T* dinp, T* dweight, const T* dout, const T* inp, const T* weight,
                      const T* rstd, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = inp + r * width;
    const T* dy = dout + r * width;
    T* dx = dinp + r * width;
    const T s = rstd[r];
    T dnorm_norm_mean = 0;
    for (int64_t i = 0; i < width; ++i) dnorm_norm_mean += weight[i] * dy[i] * x[i] * s;
    dnorm_norm_mean /= T(width);
    for (int64_t i = 0; i < width; ++i) {
      const T norm = x[i] * s;
      dweight[i] += norm * dy[i];
      dx[i] += (weight[i] * dy[i] - norm * dnorm_norm_mean) * s;
    }
  }
}

// GELU with Eigen's vectorised tanh; the formula is math::gelu / math::gelu_grad's
// (executor/op_math.h), which the CUDA kernels use.
template <typename T>
void gelu_forward(T* out, const T* inp, int64_t n) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  const Eigen::Map<const Array> x(inp, n);
  Eigen::Map<Array> y(out, n);
  const T k = T(0.7978845608028654);  // sqrt(2/pi)
  y = T(0.5) * x * (T(1) + (k * (x + T(0.044715) * x.cube())).tanh());
}

template <typename T>
void gelu_backward(T* dinp, const T* inp, const T* dout, int64_t n) {
  using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
  const Eigen::Map<const Array> x(inp, n);
  const Eigen::Map<const Array> dy(dout, n);
  Eigen::Map<Array> dx(dinp, n);
  const T k = T(0.7978845608028654);
  const T c = T(0.044715);
  constexpr int64_t kBlock = 4096;  // keeps the tanh temporary in cache
  Array t(std::min(n, kBlock));
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    auto xs = x.segment(i, m);
    t.head(m) = (k * (xs + c * xs.cube())).tanh();
    dx.segment(i, m) = dy.segment(i, m) *
                       (T(0.5) * (T(1) + t.head(m)) + T(0.5) * xs * (T(1) - t.head(m).square()) *
                                                          k * (T(1) + T(3) * c * xs.square()));
  }
}

template <typename T>
void swiglu_forward(T* out, const T* inp, int64_t rows, int64_t ffn) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* gate = inp + r * 2 * ffn;
    const T* up = gate + ffn;
    T* o = out + r * ffn;
    for (int64_t i = 0; i < ffn; ++i) o[i] = gate[i] * math::sigmoid(gate[i]) * up[i];
  }
}

template <typename T>
void swiglu_backward(T* dinp, const T* inp, const T* dout, int64_t rows, int64_t ffn) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* gate = inp + r * 2 * ffn;
    const T* up = gate + ffn;
    const T* dy = dout + r * ffn;
    T* dgate = dinp + r * 2 * ffn;
    T* dup = dgate + ffn;
    for (int64_t i = 0; i < ffn; ++i) {
      const T sig = math::sigmoid(gate[i]);
      const T silu = gate[i] * sig;
      dup[i] = dy[i] * silu;
      dgate[i] = dy[i] * up[i] * (sig + silu * (T(1) - sig));
    }
  }
}

template <typename T>
void embedding_forward(T* out, const int32_t* tokens, const T* wte, int64_t vocab_start,
                       int64_t vocab_local, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t local = static_cast<int64_t>(tokens[r]) - vocab_start;
    T* o = out + r * width;
    if (local >= 0 && local < vocab_local) {
      std::copy(wte + local * width, wte + (local + 1) * width, o);
    } else {
      std::fill(o, o + width, T(0));
    }
  }
}

template <typename T>
void embedding_backward(T* dwte, const T* dout, const int32_t* tokens, int64_t vocab_start,
                        int64_t vocab_local, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t local = static_cast<int64_t>(tokens[r]) - vocab_start;
    if (local < 0 || local >= vocab_local) continue;
    T* d = dwte + local * width;
    const T* g = dout + r * width;
    for (int64_t i = 0; i < width; ++i) d[i] += g[i];
  }
}

template <typename T>
void position_forward(T* out, const T* wpe, int64_t first_position, int64_t seq_local,
                      int64_t batch, int64_t width) {
  for (int64_t t = 0; t < seq_local; ++t) {
    const T* p = wpe + (first_position + t) * width;
    for (int64_t b = 0; b < batch; ++b) {
      T* o = out + (t * batch + b) * width;
      for (int64_t i = 0; i < width; ++i) o[i] += p[i];
    }
  }
}

template <typename T>
void position_backward(T* dwpe, const T* dout, int64_t first_position, int64_t seq_local,
                       int64_t batch, int64_t width) {
  for (int64_t t = 0; t < seq_local; ++t) {
    T* d = dwpe + (first_position + t) * width;
    for (int64_t b = 0; b < batch; ++b) {
      const T* g = dout + (t * batch + b) * width;
      for (int64_t i = 0; i < width; ++i) d[i] += g[i];
    }
  }
}

template <typename T>
void xent_row_max(T* row_max, const T* logits, int64_t rows, int64_t vocab_local,
                  int64_t vocab_valid) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* l = logits + r * vocab_local;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < vocab_valid; ++j) m = std::max(m, l[j]);
    row_max[r] = m;
  }
}

template <typename T>
void xent_sum_exp(T* stats, const T* logits, const T* row_max, const int32_t* targets,
                  int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* l = logits + r * vocab_local;
    T sum = 0;
    for (int64_t j = 0; j < vocab_valid; ++j) sum += std::exp(l[j] - row_max[r]);
    stats[r] = sum;
    const int64_t local = static_cast<int64_t>(targets[r]) - vocab_start;
    stats[rows + r] = local >= 0 && local < vocab_valid ? l[local] : T(0);
  }
}

template <typename T>
void xent_loss(T* losses, const T* row_max, const T* stats, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) losses[r] = std::log(stats[r]) + row_max[r] - stats[rows + r];
}

template <typename T>
void xent_backward(T* logits, const T* row_max, const T* stats, const int32_t* targets,
                   int64_t vocab_start, int64_t rows, int64_t vocab_local, int64_t vocab_valid,
                   T dloss) {
  for (int64_t r = 0; r < rows; ++r) {
    T* l = logits + r * vocab_local;
    const T inv_sum = T(1) / stats[r];
    for (int64_t j = 0; j < vocab_valid; ++j) l[j] = dloss * std::exp(l[j] - row_max[r]) * inv_sum;
    for (int64_t j = vocab_valid; j < vocab_local; ++j) l[j] = T(0);
    const int64_t local = static_cast<int64_t>(targets[r]) - vocab_start;
    if (local >= 0 && local < vocab_valid) l[local] -= dloss;
  }
}

template <typename T>
void adamw(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWConfig& c, bool decay) {
  const T bias1 = T(1) - static_cast<T>(std::pow(c.beta1, static_cast<double>(c.step)));
  const T bias2 = T(1) - static_cast<T>(std::pow(c.beta2, static_cast<double>(c.step)));
  const T wd = decay ? T(c.weight_decay) : T(0);
  for (int64_t i = 0; i < n; ++i) {
    math::adamw_update(param[i], grad[i], m[i], v[i], T(c.lr), T(c.beta1), T(c.beta2), T(c.eps), wd,
                       bias1, bias2);
  }
}

template <typename T>
void add(T* out, const T* a, const T* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

template <typename T>
void accumulate(T* out, const T* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] += in[i];
}

template <typename T>
double sum_squares(const T* data, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += static_cast<double>(data[i]) * static_cast<double>(data[i]);
  return sum;
}

#define PARPLAN_INSTANTIATE(T)                                                                     \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*,     \
                        int64_t, T, T*, int64_t);                                                  \
  template void layernorm_forward<T>(T*, T*, T*, const T*, const T*, const T*, int64_t, int64_t);  \
  template void layernorm_backward<T>(T*, T*, T*, const T*, const T*, const T*, const T*,          \
                                      const T*, int64_t, int64_t);                                 \
  template void rmsnorm_forward<T>(T*, T*, const T*, const T*, int64_t, int64_t);                  \
  template void rmsnorm_backward<T>(T*, T*, const T*, const T*, const T*, const T*, int64_t,       \
                                    int64_t);                                                      \
  template void gelu_forward<T>(T*, const T*, int64_t);                                            \
  template void gelu_backward<T>(T*, const T*, const T*, int64_t);                                 \
  template void swiglu_forward<T>(T*, const T*, int64_t, int64_t);                                 \
  template void swiglu_backward<T>(T*, const T*, const T*, int64_t, int64_t);                      \
  template void embedding_forward<T>(T*, const int32_t*, const T*, int64_t, int64_t, int64_t,      \
                                     int64_t);                                                     \
  template void embedding_backward<T>(T*, const T*, const int32_t*, int64_t, int64_t, int64_t,     \
                                      int64_t);                                                    \
  template void position_forward<T>(T*, const T*, int64_t, int64_t, int64_t, int64_t);             \
  template void position_backward<T>(T*, const T*, int64_t, int64_t, int64_t, int64_t);            \
  template void xent_row_max<T>(T*, const T*, int64_t, int64_t, int64_t);                          \
  template void xent_sum_exp<T>(T*, const T*, const T*, const int32_t*, int64_t, int64_t, int64_t, \
                                int64_t);                                                          \
  template void xent_loss<T>(T*, const T*, const T*, int64_t);                                     \
  template void xent_backward<T>(T*, const T*, const T*, const int32_t*, int64_t, int64_t,         \
                                 int64_t, int64_t, T);                                             \
  template void adamw<T>(T*, const T*, T*, T*, int64_t, const AdamWConfig&, bool);                 \
  template void add<T>(T*, const T*, const T*, int64_t);                                           \
  template void accumulate<T>(T*, const T*, int64_t);                                              \
  template double sum_squares<T>(const T*, int64_t);

PARPLAN_INSTANTIATE(float)
PARPLAN_INSTANTIATE(double)
#undef PARPLAN_INSTANTIATE

}  // namespace parplan::executor::cpu
