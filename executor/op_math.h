// Scalar formulas shared by the CPU reference and the CUDA kernels, so that both backends
// compute the same thing: GELU (tanh approximation, Hendrycks & Gimpel 2016, as GPT-2 and
// Megatron use), SiLU, and the AdamW update. Plain C++; the CUDA compiler sees the functions
// as __host__ __device__. Tested through tests/executor/cpu_ops_test.cpp.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define PARPLAN_HD __host__ __device__
#else
#define PARPLAN_HD
#endif

namespace parplan::executor::math {

using std::exp;
using std::sqrt;
using std::tanh;

template <typename T>
PARPLAN_HD inline T gelu(T x) {
  const T k = T(0.7978845608028654);  // sqrt(2/pi)
  const T cube = T(0.044715) * x * x * x;
  return T(0.5) * x * (T(1) + tanh(k * (x + cube)));
}

template <typename T>
PARPLAN_HD inline T gelu_grad(T x) {
  const T k = T(0.7978845608028654);
  const T cube = T(0.044715) * x * x * x;
  const T t = tanh(k * (x + cube));
  const T sech2 = T(1) - t * t;
  return T(0.5) * (T(1) + t) + T(0.5) * x * sech2 * k * (T(1) + T(3) * T(0.044715) * x * x);
}

template <typename T>
PARPLAN_HD inline T sigmoid(T x) {
  return T(1) / (T(1) + exp(-x));
}

// One AdamW element: decoupled weight decay, bias-corrected moments.
template <typename T>
PARPLAN_HD inline void adamw_update(T& param, T grad, T& m, T& v, T lr, T beta1, T beta2, T eps,
                                    T decay, T bias1, T bias2) {
  m = beta1 * m + (T(1) - beta1) * grad;
  v = beta2 * v + (T(1) - beta2) * grad * grad;
  const T m_hat = m / bias1;
  const T v_hat = v / bias2;
  param -= lr * (m_hat / (sqrt(v_hat) + eps) + decay * param);
}

}  // namespace parplan::executor::math
