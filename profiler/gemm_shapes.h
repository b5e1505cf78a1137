// The GEMM shapes a transformer layer produces (Megatron column/row-parallel linear layers at
// tensor-parallel degree tp, forward and both backward GEMMs, plus per-head attention), for
// the layer sizes each backend profiles, and a parser for user-given shapes "MxNxK[xB]".
// Tested in tests/profiler/gemm_shapes_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gemm_efficiency.h"

namespace parplan::profiler {

// One layer's dimensions (ModelSpec vocabulary): tokens = micro-batch * sequence length.
struct LayerDims {
  int64_t hidden = 0;
  int64_t ffn = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;  // query groups
  int64_t head_dim = 0;
  int64_t tokens = 0;
  int64_t seq_length = 0;
  bool swiglu = false;
  bool batched_attention = false;  // attention as one batched GEMM (GPU) or per head (CPU)
};

// For Y = X W with X tokens x K and W K x N (at tp): forward (T, N, K), input gradient
// (T, K, N) and weight gradient (K, N, T), for QKV, attention projection, fc1 and fc2; then
// attention scores (s, s, d) and context (s, d, s). Shapes whose tp-split width is not an
// integer are skipped.
std::vector<GemmShape> transformer_layer_gemms(const LayerDims& layer, int64_t tp);

// Small and skinny shapes (decode-like, tiny tiles) that bound the fitted efficiency curve.
std::vector<GemmShape> small_gemm_shapes();

// The CPU and GPU lists (deduplicated, sorted by FLOPs). --quick takes a subset.
std::vector<GemmShape> cpu_gemm_shapes(bool quick);
std::vector<GemmShape> gpu_gemm_shapes(bool quick);

// "512x1024x256,64x64x64x8" (M x N x K [x batch]); throws InputError naming `option`.
std::vector<GemmShape> parse_gemm_shapes(const std::string& text, const std::string& option);

std::string to_string(const GemmShape& shape);  // "512x1024x256" or "...x8" when batched

}  // namespace parplan::profiler
