#include "core/model_spec.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "core/presets.h"

namespace parplan {
namespace {

TEST(ModelSpec, Gpt3ParameterCountMatchesNarayanan) {
  // Narayanan et al. 2021 §5.1: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)); 174.6B for
  // GPT-3 (l=96, h=12288, V=51200, s=2048). Our count omits linear biases (9h per layer)
  // and adds the final LayerNorm (2h), which the formula leaves out.
  const ModelSpec m = *find_model_preset("gpt3-175b");
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double narayanan = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  const double ours = static_cast<double>(m.total_params(2048));
  EXPECT_NEAR(ours, narayanan - 9 * h * l + 2 * h, 1.0);
}

TEST(ModelSpec, GqaSwigluLlama8B) {
  const ModelSpec m = *find_model_preset("llama3.1-8b");
  // Published: 8.03B parameters (Llama 3.1 model card).
  EXPECT_NEAR(static_cast<double>(m.total_params(8192)) / 1e9, 8.03, 0.01);
  EXPECT_EQ(m.kv_width(), 1024);
  EXPECT_EQ(m.attention_params(), 4096LL * (4096 + 2 * 1024) + 4096LL * 4096);
}

TEST(ModelSpec, MoeLayersAndActiveParams) {
  const Json j = parse_json(R"({"name": "moe", "num_layers": 8, "hidden_size": 64,
      "num_attention_heads": 4, "ffn_hidden_size": 256, "vocab_size": 100, "activation": "swiglu",
      "normalization": "rmsnorm", "position_embedding": "rotary", "tied_embeddings": false,
      "moe": {"num_experts": 8, "top_k": 2, "expert_ffn_hidden_size": 32, "moe_layer_frequency": 2,
              "first_dense_layers": 2}})",
                            "m.json");
  const ModelSpec m = parse_model_spec(j, "m.json", "model");
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_FALSE(m.is_moe_layer(1));
  EXPECT_TRUE(m.is_moe_layer(2));
  EXPECT_FALSE(m.is_moe_layer(3));
  EXPECT_TRUE(m.is_moe_layer(4));
  EXPECT_EQ(m.num_moe_layers(), 3);
  EXPECT_EQ(m.routed_expert_params(), 3 * 64 * 32);
  EXPECT_EQ(m.total_params(16) - m.active_params(16), 3 * 6 * m.routed_expert_params());
}

TEST(ModelSpec, MoeLayersInARangeCountWhatIsMoeLayerSays) {
  // The closed form against the layer-by-layer count, for every range of a model with dense
  // first layers and MoE every other layer, and of one with MoE everywhere.
  for (const auto& [first_dense, frequency] : {std::pair<int64_t, int64_t>{3, 2}, {0, 1}, {5, 3}}) {
    ModelSpec m = find_model_preset("mixtral-8x7b").value();
    m.moe->first_dense_layers = first_dense;
    m.moe->moe_layer_frequency = frequency;
    for (int64_t first = 0; first <= m.num_layers; ++first) {
      for (int64_t count = 0; first + count <= m.num_layers; ++count) {
        int64_t naive = 0;
        for (int64_t l = first; l < first + count; ++l) naive += m.is_moe_layer(l) ? 1 : 0;
        ASSERT_EQ(m.moe_layers_in(first, count), naive) << first << " + " << count;
      }
    }
    EXPECT_EQ(m.moe_layers_in(0, m.num_layers), m.num_moe_layers());
  }
}

TEST(ModelSpec, HeadsMustDivideHiddenWithoutHeadDim) {
  const Json j = parse_json(R"({"name": "x", "num_layers": 2, "hidden_size": 100,
      "num_attention_heads": 3, "vocab_size": 10})",
                            "m.json");
  EXPECT_THROW(parse_model_spec(j, "m.json", "model"), InputError);
}

// The overflow check counts in double what total_params() counts in int64: they must agree.
TEST(ModelSpec, DoubleCountMatchesTheInt64CountOnEveryPreset) {
  for (const auto& name : model_preset_names()) {
    SCOPED_TRACE(name);
    const ModelSpec m = *find_model_preset(name);
    for (int64_t seq : {int64_t{1}, int64_t{4096}, int64_t{131072}}) {
      const double exact = static_cast<double>(m.total_params(seq));
      EXPECT_NEAR(model_params_in_double(m, seq), exact, 1e-12 * exact);
    }
  }
}

std::string error_of(const std::string& text) {
  try {
    parse_model_spec(parse_json(text, "m.json"), "m.json", "model");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelSpec, ProductsBeyondTheBoundAreInputErrors) {
  // Each field is within its own bound; their products are not (4e22 and 1.3e20 parameters,
  // beyond int64): an error naming the model, never an overflow.
  EXPECT_NE(error_of(R"({"name": "x", "num_layers": 100000, "hidden_size": 1000000,
      "num_attention_heads": 100000, "head_dim": 1000000, "vocab_size": 100000000})")
                .find("model: found a model of 4e+22 parameters"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "x", "num_layers": 4, "hidden_size": 1000000,
      "num_attention_heads": 1000, "vocab_size": 10,
      "moe": {"num_experts": 1000000, "expert_ffn_hidden_size": 16000000}})")
                .find("parameters"),
            std::string::npos);
  // The default shared-expert width (count x width) is bounded too.
  EXPECT_NE(error_of(R"({"name": "x", "num_layers": 4, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 10,
      "moe": {"num_experts": 8, "expert_ffn_hidden_size": 16000000, "num_shared_experts": 2}})")
                .find("model.moe.num_shared_experts"),
            std::string::npos);
  // Zero is not a positive size (JSON's non-negative integers are unsigned in nlohmann).
  EXPECT_NE(error_of(R"({"name": "x", "num_layers": 0, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 10})")
                .find("model.num_layers: found 0"),
            std::string::npos);
}

TEST(ModelSpec, ValidateChecksFieldsOfModelsBuiltInCode) {
  ModelSpec m = *find_model_preset("llama2-7b");
  m.hidden_size = 2'000'000;
  EXPECT_THROW(validate_model_spec(m, "code", "model"), InputError);
  m = *find_model_preset("llama2-7b");
  m.num_layers = 0;
  EXPECT_THROW(validate_model_spec(m, "code", "model"), InputError);
  EXPECT_NO_THROW(validate_model_spec(*find_model_preset("deepseek-v3"), "code", "model"));
}

}  // namespace
}  // namespace parplan
