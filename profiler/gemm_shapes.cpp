#include "profiler/gemm_shapes.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

#include "core/check.h"

namespace parplan::profiler {

namespace {

std::vector<GemmShape> dedup_sorted(std::vector<GemmShape> shapes) {
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> seen;
  std::vector<GemmShape> out;
  for (const auto& s : shapes) {
    if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) continue;
    if (seen.insert({s.m, s.n, s.k, s.batch}).second) out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [](const GemmShape& a, const GemmShape& b) {
    return gemm_flops(a) < gemm_flops(b);
  });
  return out;
}

std::vector<GemmShape> layers_at(const std::vector<LayerDims>& layers,
                                 const std::vector<int64_t>& tps) {
  std::vector<GemmShape> all;
  for (const auto& layer : layers) {
    for (int64_t tp : tps) {
      auto shapes = transformer_layer_gemms(layer, tp);
      all.insert(all.end(), shapes.begin(), shapes.end());
    }
  }
  return all;
}

LayerDims layer(int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn, int64_t tokens,
                int64_t seq, bool swiglu, bool batched) {
  return LayerDims{hidden, ffn, heads, kv_heads, hidden / heads, tokens, seq, swiglu, batched};
}

}  // namespace

std::vector<GemmShape> transformer_layer_gemms(const LayerDims& l, int64_t tp) {
  std::vector<GemmShape> out;
  const int64_t q = l.heads * l.head_dim;
  const int64_t kv = l.kv_heads * l.head_dim;
  if (tp <= 0 || l.heads % tp != 0 || l.kv_heads % tp != 0 || l.ffn % tp != 0) return out;
  const int64_t ffn_out = l.ffn * (l.swiglu ? 2 : 1);
  // (K, N) of each linear layer at tp: column-parallel splits N, row-parallel splits K.
  const std::vector<std::pair<int64_t, int64_t>> linears = {
      {l.hidden, (q + 2 * kv) / tp},  // QKV
      {q / tp, l.hidden},             // attention output projection
      {l.hidden, ffn_out / tp},       // fc1 (gate and up together for SwiGLU)
      {l.ffn / tp, l.hidden},         // fc2
  };
  const int64_t t = l.tokens;
  for (const auto& [k, n] : linears) {
    out.push_back({t, n, k, 1});  // forward
    out.push_back({t, k, n, 1});  // input gradient
    out.push_back({k, n, t, 1});  // weight gradient
  }
  const int64_t s = l.seq_length;
  const int64_t heads_per_rank = l.heads / tp;
  const int64_t micro_batch = std::max<int64_t>(1, l.tokens / std::max<int64_t>(1, s));
  const int64_t batch = l.batched_attention ? micro_batch * heads_per_rank : 1;
  out.push_back({s, s, l.head_dim, batch});  // scores Q K^T
  out.push_back({s, l.head_dim, s, batch});  // context P V
  return out;
}

std::vector<GemmShape> small_gemm_shapes() {
  return {{32, 32, 32, 1},   {64, 64, 64, 1},   {128, 128, 128, 1}, {16, 512, 512, 1},
          {512, 16, 512, 1}, {512, 512, 16, 1}, {256, 256, 1024, 1}};
}

std::vector<GemmShape> cpu_gemm_shapes(bool quick) {
  // Widths the CPU executor trains (head_dim 64, GELU MLP), at tp 1..8.
  std::vector<LayerDims> layers;
  std::vector<int64_t> tps;
  if (quick) {
    layers = {layer(256, 4, 4, 1024, 512, 256, false, false),
              layer(512, 8, 8, 2048, 512, 256, false, false)};
    tps = {1, 4};
  } else {
    for (int64_t tokens : {512, 2048}) {
      layers.push_back(layer(256, 4, 4, 1024, tokens, 256, false, false));
      layers.push_back(layer(512, 8, 8, 2048, tokens, 512, false, false));
      layers.push_back(layer(1024, 16, 16, 4096, tokens, 512, false, false));
    }
    tps = {1, 2, 4, 8};
  }
  auto shapes = layers_at(layers, tps);
  const auto small = small_gemm_shapes();
  shapes.insert(shapes.end(), small.begin(), small.end());
  return dedup_sorted(shapes);
}

std::vector<GemmShape> gpu_gemm_shapes(bool quick) {
  // Llama-3-8B-, Llama-3-70B- and GPT-3-175B-sized layers (hidden, heads, query groups, ffn).
  const LayerDims small = layer(4096, 32, 8, 14336, 4096, 4096, true, true);
  const LayerDims large = layer(8192, 64, 8, 28672, 4096, 4096, true, true);
  const LayerDims gpt3 = layer(12288, 96, 96, 49152, 2048, 2048, false, true);
  std::vector<GemmShape> shapes;
  if (quick) {
    shapes = layers_at({small, large}, {1, 8});
  } else {
    std::vector<LayerDims> layers;
    for (int64_t micro_batch : {1, 2}) {
      for (LayerDims l : {small, large, gpt3}) {
        l.tokens = micro_batch * l.seq_length;
        layers.push_back(l);
      }
    }
    shapes = layers_at(layers, {1, 2, 4, 8});
  }
  for (const auto& s : small_gemm_shapes()) shapes.push_back(s);
  shapes.push_back({1024, 1024, 1024, 1});
  shapes.push_back({8192, 8192, 8192, 1});
  return dedup_sorted(shapes);
}

std::vector<GemmShape> parse_gemm_shapes(const std::string& text, const std::string& option) {
  std::vector<GemmShape> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    std::vector<int64_t> dims;
    std::size_t pos = 0;
    bool ok = !item.empty();
    while (ok && pos <= item.size()) {
      const std::size_t x = std::min(item.find('x', pos), item.size());
      int64_t value = 0;
      const auto [ptr, ec] = std::from_chars(item.data() + pos, item.data() + x, value);
      ok = ec == std::errc() && ptr == item.data() + x && value > 0 && value <= 10'000'000;
      dims.push_back(value);
      pos = x + 1;
    }
    if (!ok || dims.size() < 3 || dims.size() > 4) {
      throw InputError("", option, "\"" + item + "\"",
                       "shapes M x N x K [x batch] of positive integers, e.g. 512x1024x256, "
                       "separated by commas");
    }
    out.push_back({dims[0], dims[1], dims[2], dims.size() == 4 ? dims[3] : 1});
    begin = end + 1;
  }
  return out;
}

std::string to_string(const GemmShape& s) {
  std::string text = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  if (s.batch != 1) text += "x" + std::to_string(s.batch);
  return text;
}

}  // namespace parplan::profiler
