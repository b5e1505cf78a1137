// Imports the real Hugging Face config.json files in tests/data/hf/ (see its README.md) with
// parplan::import_hf_config and through a job file whose "model" is the config's path, and
// checks the resulting ModelSpec fields and parameter totals against the presets and the
// published counts.
#include "core/hf_config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/check.h"
#include "core/job.h"
#include "core/presets.h"

namespace parplan {
namespace {

std::string hf_path(const std::string& dir) {
  return std::string(PARPLAN_TEST_DATA) + "/hf/" + dir + "/config.json";
}

ModelSpec import_dir(const std::string& dir) {
  const std::string path = hf_path(dir);
  const Json config = load_json_file(path);
  EXPECT_TRUE(is_hf_config(config)) << path;
  return import_hf_config(config, path);
}

// Every structural field, without the name (an import is named after its config).
Json shape_of(const ModelSpec& m) {
  Json j = model_spec_to_json(m);
  j.erase("name");
  return j;
}

// Configs whose model has a preset: the import must equal it field by field.
struct Pair {
  const char* dir;
  const char* preset;
};
const Pair kPairs[] = {
    {"Llama-3.1-8B", "llama3.1-8b"},
    {"Mistral-7B-v0.1", "mistral-7b"},
    {"Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"},
    // Qwen2.5-72B has exactly the shape of Qwen2-72B (Qwen2.5 report, Table 1).
    {"Qwen2-72B", "qwen2.5-72b"},
    {"Qwen3-30B-A3B", "qwen3-30b-a3b"},
    {"DeepSeek-V3", "deepseek-v3"},
    {"bloom", "bloom-176b"},
};

TEST(HfConfig, ImportsEqualThePresets) {
  for (const auto& pair : kPairs) {
    SCOPED_TRACE(pair.dir);
    const ModelSpec imported = import_dir(pair.dir);
    const ModelSpec preset = *find_model_preset(pair.preset);
    EXPECT_EQ(shape_of(imported).dump(1), shape_of(preset).dump(1));
    EXPECT_EQ(imported.total_params(4096), preset.total_params(4096));
    EXPECT_EQ(imported.active_params(4096), preset.active_params(4096));
  }
}

// What a launch needs beyond the cost model: biases, q/k norms, RoPE base and Llama 3 scaling.
TEST(HfConfig, BiasesNormsAndRopeForTheExports) {
  const ModelSpec llama = import_dir("Llama-3.1-8B");
  EXPECT_FALSE(llama.linear_bias);
  EXPECT_FALSE(llama.qkv_bias);
  EXPECT_EQ(llama.rotary_base, 500000.0);
  EXPECT_EQ(llama.rope_scaling_factor, 8.0);
  const ModelSpec qwen2 = import_dir("Qwen2-72B");
  EXPECT_TRUE(qwen2.qkv_bias);
  EXPECT_FALSE(qwen2.linear_bias);
  EXPECT_EQ(qwen2.rotary_base, 1000000.0);
  EXPECT_EQ(qwen2.rope_scaling_factor, 0.0);
  EXPECT_TRUE(import_dir("Qwen3-30B-A3B").qk_norm);
  const ModelSpec gpt2 = import_dir("gpt2");
  EXPECT_TRUE(gpt2.linear_bias);
  EXPECT_TRUE(gpt2.qkv_bias);
}

TEST(HfConfig, NamesComeFromNameOrPathOrTheFolder) {
  EXPECT_EQ(import_dir("Llama-3.1-8B").name, "Llama-3.1-8B");
  EXPECT_EQ(import_dir("bloom").name, "bigscience/bloom");
}

TEST(HfConfig, LlamaFields) {
  const ModelSpec m = import_dir("Llama-3.1-8B");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_query_groups, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.ffn_hidden_size, 14336);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.activation, Activation::Swiglu);
  EXPECT_EQ(m.normalization, Normalization::RmsNorm);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::Rotary);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.moe.has_value());
  // transformers' count of meta-llama/Llama-3.1-8B (no biases in Llama).
  EXPECT_EQ(m.total_params(8192), 8'030'261'248LL);
}

TEST(HfConfig, Gpt2ExactCountDiffersOnlyByBiases) {
  const ModelSpec m = import_dir("gpt2");
  EXPECT_EQ(m.num_layers, 12);
  EXPECT_EQ(m.hidden_size, 768);
  EXPECT_EQ(m.num_attention_heads, 12);
  EXPECT_EQ(m.ffn_hidden_size, 3072) << "n_inner null means 4h";
  EXPECT_EQ(m.vocab_size, 50257);
  EXPECT_EQ(m.activation, Activation::Gelu);
  EXPECT_EQ(m.normalization, Normalization::LayerNorm);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::Learned);
  EXPECT_TRUE(m.tied_embeddings);
  // openai-community/gpt2 has 124,439,808 parameters with n_positions 1024; ModelSpec
  // leaves out the 9h linear biases per layer (c_attn 3h, c_proj h, c_fc 4h, c_proj h).
  EXPECT_EQ(m.total_params(1024) + 12 * 9 * 768, 124'439'808LL);
}

TEST(HfConfig, MixtralExperts) {
  const ModelSpec m = import_dir("Mixtral-8x7B-Instruct-v0.1");
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_experts, 8);
  EXPECT_EQ(m.moe->top_k, 2);
  EXPECT_EQ(m.moe->expert_ffn_hidden_size, 14336) << "experts use intermediate_size";
  EXPECT_EQ(m.moe->num_shared_experts, 0);
  EXPECT_EQ(m.num_moe_layers(), 32);
  EXPECT_NEAR(static_cast<double>(m.total_params(4096)) / 46.7e9, 1.0, 0.015);
  EXPECT_NEAR(static_cast<double>(m.active_params(4096)) / 12.9e9, 1.0, 0.015);
}

TEST(HfConfig, QwenMoeSharedExpert) {
  const ModelSpec m = import_dir("Qwen1.5-MoE-A2.7B");
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_experts, 60);
  EXPECT_EQ(m.moe->top_k, 4);
  EXPECT_EQ(m.moe->expert_ffn_hidden_size, 1408);
  EXPECT_EQ(m.moe->num_shared_experts, 1);
  EXPECT_EQ(m.moe->shared_expert_ffn_hidden_size, 5632);
  EXPECT_EQ(m.num_moe_layers(), 24);
  // Qwen1.5-MoE-A2.7B announcement: 14.3B parameters in total, 2.7B activated (QKV biases and
  // the shared-expert gate, 0.05% together, are not counted).
  EXPECT_NEAR(static_cast<double>(m.total_params(4096)) / 14.3e9, 1.0, 0.015);
  EXPECT_NEAR(static_cast<double>(m.active_params(4096)) / 2.7e9, 1.0, 0.015);
}

TEST(HfConfig, DeepSeekV3MlaAndDenseLayers) {
  const ModelSpec m = import_dir("DeepSeek-V3");
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->q_lora_rank, 1536);
  EXPECT_EQ(m.mla->kv_lora_rank, 512);
  EXPECT_EQ(m.head_dim, 192);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->first_dense_layers, 3);
  EXPECT_EQ(m.moe->moe_layer_frequency, 1);
  EXPECT_EQ(m.moe->num_shared_experts, 1);
  EXPECT_EQ(m.moe->shared_expert_ffn_hidden_size, 2048);
  EXPECT_NEAR(static_cast<double>(m.total_params(4096)) / 671e9, 1.0, 0.015);
}

TEST(HfConfig, BloomUsesAlibiAndOldKeyNames) {
  const ModelSpec m = import_dir("bloom");
  EXPECT_EQ(m.hidden_size, 14336) << "bigscience/bloom spells it n_embed";
  EXPECT_EQ(m.num_attention_heads, 112);
  EXPECT_EQ(m.num_layers, 70);
  EXPECT_EQ(m.ffn_hidden_size, 4 * 14336);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::Alibi);
  EXPECT_TRUE(m.tied_embeddings);
}

// transformers' layer placement (modeling_qwen2_moe.py, modeling_deepseek.py) on variants of
// the real configs.
TEST(HfConfig, MoeLayerPlacementFollowsTransformers) {
  const std::string path = hf_path("Qwen3-30B-A3B");
  Json qwen = load_json_file(path);
  qwen["decoder_sparse_step"] = 2;  // layers 1, 3, 5, ... are MoE
  ModelSpec m = import_hf_config(qwen, path);
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_TRUE(m.is_moe_layer(47));
  EXPECT_EQ(m.num_moe_layers(), 24);

  qwen["decoder_sparse_step"] = 1;
  qwen["mlp_only_layers"] = Json::array({0, 1});
  m = import_hf_config(qwen, path);
  EXPECT_EQ(m.moe->first_dense_layers, 2);
  EXPECT_EQ(m.num_moe_layers(), 46);

  qwen["mlp_only_layers"] = Json::array({0, 5});
  try {
    import_hf_config(qwen, path);
    FAIL() << "scattered dense layers cannot be expressed";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key_path(), "mlp_only_layers");
    EXPECT_NE(std::string(e.what()).find("[0, 5]"), std::string::npos) << e.what();
  }

  const std::string ds_path = hf_path("DeepSeek-V3");
  Json ds = load_json_file(ds_path);
  ds["moe_layer_freq"] = 2;  // MoE where i >= 3 and i % 2 == 0: layers 4, 6, ..., 60
  m = import_hf_config(ds, ds_path);
  EXPECT_FALSE(m.is_moe_layer(3));
  EXPECT_TRUE(m.is_moe_layer(4));
  EXPECT_FALSE(m.is_moe_layer(5));
  EXPECT_TRUE(m.is_moe_layer(60));
  EXPECT_EQ(m.num_moe_layers(), 29);
}

TEST(HfConfig, BadValuesNameTheKey) {
  const std::string path = hf_path("Llama-3.1-8B");
  Json config = load_json_file(path);
  config["num_hidden_layers"] = "32";
  try {
    import_hf_config(config, path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key_path(), "num_hidden_layers");
    EXPECT_EQ(e.file(), path);
  }
  config = load_json_file(path);
  config.erase("hidden_size");
  EXPECT_THROW(import_hf_config(config, path), InputError);
}

// An architecture the importer does not know is an error listing those it knows, not a
// dense Llama (issue 20, point 5).
TEST(HfConfig, UnknownModelTypeListsTheSupportedOnes) {
  const std::string path = hf_path("Llama-3.1-8B");
  Json config = load_json_file(path);
  config["model_type"] = "llama4_text";
  try {
    import_hf_config(config, path);
    FAIL() << "llama4_text is not read as llama";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key_path(), "model_type");
    const std::string msg = e.what();
    EXPECT_NE(msg.find("found \"llama4_text\" (not supported)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"llama\", \"mistral\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("\"deepseek_v3\""), std::string::npos) << msg;
  }
  // Without model_type the first architectures class decides.
  config.erase("model_type");
  config["architectures"] = Json::array({"Llama4ForCausalLM"});
  try {
    import_hf_config(config, path);
    FAIL() << "Llama4ForCausalLM is not read as llama";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key_path(), "architectures[0]");
  }
  config["architectures"] = Json::array({"LlamaForCausalLM"});
  EXPECT_EQ(import_hf_config(config, path).num_layers, 32);
}

TEST(HfConfig, MaxPositionsAreKeptForTheSequenceWarning) {
  const ModelSpec llama = import_dir("Llama-3.1-8B");
  EXPECT_EQ(llama.max_position_embeddings, 131072);
  EXPECT_EQ(llama.max_position_source, hf_path("Llama-3.1-8B") + " max_position_embeddings");
  EXPECT_EQ(import_dir("gpt2").max_position_embeddings, 1024);  // n_positions
}

// The job file's "model" may be the path of a config.json (docs/job_file.md#model).
TEST(HfConfig, JobFileModelIsAConfigPath) {
  for (const auto& pair : kPairs) {
    SCOPED_TRACE(pair.dir);
    const std::string job_path = testing::TempDir() + "/hf_job.json";
    std::ofstream(job_path) << R"({"model": ")" << hf_path(pair.dir)
                            << R"(", "cluster": {"node": "dgx-h100", "num_nodes": 1},
        "training": {"global_batch_size": 8, "seq_length": 4096}})";
    const Job job = load_job(job_path, PlanCheck::Skip);
    EXPECT_EQ(shape_of(job.model).dump(), shape_of(import_dir(pair.dir)).dump());
  }
}

}  // namespace
}  // namespace parplan
