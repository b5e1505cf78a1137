// Reference loops of the memory-bound kernels of a transformer layer, in the form a CPU
// training step uses them (row-major rows x cols, fp32): layer norm, RMS norm, GELU (tanh
// form), SwiGLU and row softmax. They are the profiler's own plain loops, written to time the
// memory-bound class of kernels on a CPU (the executor keeps its own implementations); the
// bytes each one moves are given by *_bytes for bandwidth reports.
// Tested in tests/profiler/cpu_reference_kernels_test.cpp against closed forms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parplan::profiler {

// out[r, :] = (x[r, :] - mean) / sqrt(var + eps) * gamma + beta
void reference_layernorm(float* out, const float* x, const float* gamma, const float* beta,
                         int64_t rows, int64_t cols, float eps = 1e-5f);
// out[r, :] = x[r, :] / sqrt(mean(x^2) + eps) * gamma
void reference_rmsnorm(float* out, const float* x, const float* gamma, int64_t rows, int64_t cols,
                       float eps = 1e-5f);
// out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (Hendrycks & Gimpel 2016)
void reference_gelu(float* out, const float* x, int64_t count);
// out = silu(gate) * up, silu(g) = g / (1 + exp(-g))  (Shazeer 2020)
void reference_swiglu(float* out, const float* gate, const float* up, int64_t count);
// out[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max))
void reference_softmax(float* out, const float* x, int64_t rows, int64_t cols);

// A memory-bound kernel to time: its name, size, bytes moved by one call and a runner over
// buffers it owns.
struct MemoryBoundKernel {
  std::string name;
  int64_t rows = 0;
  int64_t cols = 0;
  double bytes = 0;
  std::vector<float> a, b, c, out;
  void run();
};

// The kernel set for one (rows, cols): norms over hidden, activations over ffn, softmax
// over sequence.
MemoryBoundKernel make_memory_bound_kernel(const std::string& name, int64_t rows, int64_t cols);
std::vector<std::string> memory_bound_kernel_names();

}  // namespace parplan::profiler
