// Unit tests of the transformer-layer GEMM shapes and the shape parser.
#include "profiler/gemm_shapes.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/check.h"

namespace parplan::profiler {
namespace {

bool contains(const std::vector<GemmShape>& shapes, GemmShape s) {
  return std::any_of(shapes.begin(), shapes.end(), [&](const GemmShape& x) {
    return x.m == s.m && x.n == s.n && x.k == s.k && x.batch == s.batch;
  });
}

TEST(GemmShapes, MegatronLayerAtTensorParallelFour) {
  // GPT-style layer: h 1024, 16 heads, ffn 4096, 2 sequences of 512 tokens.
  const LayerDims layer{1024, 4096, 16, 16, 64, 1024, 512, false, true};
  const auto shapes = transformer_layer_gemms(layer, 4);
  EXPECT_TRUE(contains(shapes, {1024, 768, 1024, 1}));   // QKV forward: 3h/tp
  EXPECT_TRUE(contains(shapes, {1024, 1024, 256, 1}));   // projection forward: K = h/tp
  EXPECT_TRUE(contains(shapes, {1024, 1024, 1024, 1}));  // fc1 forward: 4h/tp
  EXPECT_TRUE(contains(shapes, {1024, 1024, 768, 1}));   // QKV input gradient
  EXPECT_TRUE(contains(shapes, {1024, 768, 1024, 1}));   // QKV weight gradient (K = tokens)
  EXPECT_TRUE(contains(shapes, {512, 512, 64, 8}));      // scores: 2 sequences x 4 heads
  EXPECT_TRUE(contains(shapes, {512, 64, 512, 8}));      // context
  EXPECT_EQ(shapes.size(), 14u);
}

TEST(GemmShapes, GroupedQuerySwigluAndIndivisibleTp) {
  const LayerDims layer{4096, 14336, 32, 8, 128, 4096, 4096, true, true};
  const auto shapes = transformer_layer_gemms(layer, 8);
  EXPECT_TRUE(contains(shapes, {4096, (4096 + 2 * 1024) / 8, 4096, 1}));
  EXPECT_TRUE(contains(shapes, {4096, 2 * 14336 / 8, 4096, 1}));
  EXPECT_TRUE(transformer_layer_gemms(layer, 3).empty());
}

TEST(GemmShapes, ListsAreDeduplicatedAndSorted) {
  for (bool quick : {true, false}) {
    for (const auto& list : {cpu_gemm_shapes(quick), gpu_gemm_shapes(quick)}) {
      ASSERT_GE(list.size(), 10u);
      for (std::size_t i = 1; i < list.size(); ++i) {
        EXPECT_LE(gemm_flops(list[i - 1]), gemm_flops(list[i]));
      }
    }
  }
  EXPECT_LT(cpu_gemm_shapes(true).size(), cpu_gemm_shapes(false).size());
}

TEST(GemmShapes, Parser) {
  const auto shapes = parse_gemm_shapes("512x1024x256,64x64x64x8", "--gemm-shapes");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(to_string(shapes[0]), "512x1024x256");
  EXPECT_EQ(to_string(shapes[1]), "64x64x64x8");
  for (const char* bad : {"", "512x1024", "1x2x3x4x5", "0x1x1", "ax1x1", "1x1x1,", "1x1x-1"}) {
    EXPECT_THROW(parse_gemm_shapes(bad, "--gemm-shapes"), InputError) << bad;
  }
  try {
    parse_gemm_shapes("12x", "--gemm-shapes");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gemm-shapes"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("\"12x\""), std::string::npos);
  }
}

}  // namespace
}  // namespace parplan::profiler
