// One GEMM on the GPU through cuBLASLt, D = A B (M x N = (M x K)(K x N)), batched by strided
// batches: bf16 / fp16 (same type in and out) or fp8 e4m3 inputs with bf16 output (sm >= 89),
// fp32 accumulation. Operands are stored column-major as cuBLASLt's "TN" layout (A as K x M
// transposed, B as K x N), the one fp8 requires, so every precision runs the same layout.
// The algorithm is cuBLASLt's first heuristic choice with a 32 MiB workspace. No CUDA types
// in this header (pimpl; the stream is void*). Tested by tests/gpu/profiler_gemm_gpu_test.cpp
// against a CPU reference.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/gemm_efficiency.h"

namespace parplan::profiler::cuda {

// Whether cuBLASLt here can run `precision` on a device of compute capability cc (90 = 9.0).
bool gemm_precision_supported(const std::string& precision, int compute_capability);

class CublasLtGemm {
 public:
  CublasLtGemm(const GemmShape& shape, const std::string& precision, void* stream, uint64_t seed);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  void run();  // enqueues one GEMM on the stream
  double operand_bytes() const;
  // Host copies as float, for checks: A (K x M per batch, column-major), B (K x N), D (M x N).
  std::vector<float> a_as_float() const;
  std::vector<float> b_as_float() const;
  std::vector<float> d_as_float() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string cublaslt_version();

}  // namespace parplan::profiler::cuda
