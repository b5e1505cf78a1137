#include "core/hf_config.h"

#include <filesystem>
#include <vector>

#include "core/check.h"

namespace parplan {

namespace {

constexpr int64_t kMax = 100'000'000;

// Reads the first of several alternative keys that is present (HF families name alike
// things differently).
class HfReader {
 public:
  HfReader(const Json& object, std::string file) : object_(object), file_(std::move(file)) {}

  const Json* find(std::initializer_list<const char*> keys,
                   std::string* found_key = nullptr) const {
    for (const char* key : keys) {
      auto it = object_.find(key);
      if (it != object_.end() && !it->is_null()) {
        if (found_key != nullptr) *found_key = key;
        return &*it;
      }
    }
    return nullptr;
  }

  int64_t require_int(std::initializer_list<const char*> keys, int64_t min,
                      int64_t max = kMax) const {
    std::string key;
    const Json* value = find(keys, &key);
    if (value == nullptr) {
      std::string names;
      for (const char* k : keys) names += (names.empty() ? "" : " or ") + std::string(k);
      throw InputError(file_, names, "nothing (the key is missing)",
                       "an integer >= " + std::to_string(min));
    }
    return json_to_int(*value, file_, key, min, max);
  }

  std::optional<int64_t> optional_int(std::initializer_list<const char*> keys, int64_t min,
                                      int64_t max = kMax) const {
    std::string key;
    const Json* value = find(keys, &key);
    if (value == nullptr) return std::nullopt;
    return json_to_int(*value, file_, key, min, max);
  }

  std::optional<double> optional_number(const char* key, double min, double max) const {
    const Json* value = find({key});
    if (value == nullptr) return std::nullopt;
    return json_to_number(*value, file_, key, min, max);
  }

  std::optional<bool> optional_bool(const char* key) const {
    const Json* value = find({key});
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean()) {
      throw InputError(file_, key, describe_json_value(*value), "true or false");
    }
    return value->get<bool>();
  }

  // An integer list such as Qwen-MoE's mlp_only_layers; empty when absent or null.
  std::vector<int64_t> int_list(const char* key) const {
    const Json* value = find({key});
    if (value == nullptr) return {};
    if (!value->is_array()) {
      throw InputError(file_, key, describe_json_value(*value), "a list of layer indices");
    }
    std::vector<int64_t> out;
    for (std::size_t i = 0; i < value->size(); ++i) {
      out.push_back(json_to_int((*value)[i], file_,
                                std::string(key) + "[" + std::to_string(i) + "]", 0, kMax));
    }
    return out;
  }

  std::string string_or(const char* key, std::string fallback) const {
    const Json* value = find({key});
    if (value == nullptr) return fallback;
    if (!value->is_string()) throw InputError(file_, key, describe_json_value(*value), "a string");
    return value->get<std::string>();
  }

 private:
  const Json& object_;
  std::string file_;
};

// Which layers are MoE. ModelSpec puts them at first_dense_layers + k * moe_layer_frequency.
// transformers places them differently per family:
//  - DeepSeek-V2/V3 (modeling_deepseek.py): layer i is MoE when i >= first_k_dense_replace and
//    i % moe_layer_freq == 0, i.e. from the first multiple of the frequency at or after k;
//  - Qwen2-MoE/Qwen3-MoE (modeling_qwen2_moe.py): layer i is MoE when i is not in
//    mlp_only_layers and (i + 1) % decoder_sparse_step == 0, i.e. from layer step - 1 on.
// Layouts ModelSpec cannot express (scattered mlp_only_layers) are an input error.
void place_moe_layers(const HfReader& in, const std::string& file, int64_t num_layers,
                      MoeSpec& moe) {
  if (auto freq = in.optional_int({"moe_layer_freq"}, 1, kMaxModelLayers)) {
    const int64_t first_k =
        in.optional_int({"first_k_dense_replace"}, 0, kMaxModelLayers).value_or(0);
    moe.moe_layer_frequency = *freq;
    moe.first_dense_layers = (first_k + *freq - 1) / *freq * *freq;
    return;
  }
  moe.first_dense_layers =
      in.optional_int({"first_k_dense_replace"}, 0, kMaxModelLayers).value_or(0);
  const int64_t step = in.optional_int({"decoder_sparse_step"}, 1, kMaxModelLayers).value_or(1);
  const std::vector<int64_t> mlp_only = in.int_list("mlp_only_layers");
  if (step > 1) {
    moe.moe_layer_frequency = step;
    moe.first_dense_layers = step - 1;
  }
  if (mlp_only.empty()) return;
  // A leading run 0..n-1 of dense layers (with every later layer MoE) is expressible.
  bool leading_run = step == 1;
  for (std::size_t i = 0; i < mlp_only.size() && leading_run; ++i) {
    leading_run = mlp_only[i] == static_cast<int64_t>(i);
  }
  if (!leading_run || static_cast<int64_t>(mlp_only.size()) >= num_layers) {
    std::string found;
    for (int64_t layer : mlp_only) found += (found.empty() ? "" : ", ") + std::to_string(layer);
    throw InputError(file, "mlp_only_layers", "[" + found + "]",
                     "empty, or the leading layers 0..n-1 with decoder_sparse_step 1 (other dense "
                     "layer layouts cannot be expressed; write the model as our JSON instead)");
  }
  moe.first_dense_layers = static_cast<int64_t>(mlp_only.size());
}

bool starts_with_any(const std::string& text, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes) {
    if (text.rfind(p, 0) == 0) return true;
  }
  return false;
}

// Biases, query/key norms and RoPE settings of Llama-style configs (transformers): Llama's
// attention_bias and mlp_bias (default false); Qwen2's attention always has q/k/v biases;
// Qwen3 normalises each head's queries and keys; rope_theta; rope_scaling of type "llama3".
void read_rotary_details(const HfReader& in, const std::string& model_type, ModelSpec& m) {
  const bool attention_bias = in.optional_bool("attention_bias").value_or(false);
  m.linear_bias = attention_bias && in.optional_bool("mlp_bias").value_or(false);
  m.qkv_bias = attention_bias || starts_with_any(model_type, {"qwen2", "Qwen2"});
  m.qk_norm = starts_with_any(model_type, {"qwen3", "Qwen3"});
  m.rotary_base = in.optional_number("rope_theta", 1.0, 1e12).value_or(10000.0);
  if (const Json* scaling = in.find({"rope_scaling"}); scaling != nullptr && scaling->is_object()) {
    std::string type;
    for (const char* key : {"rope_type", "type"}) {
      if (auto it = scaling->find(key); it != scaling->end() && it->is_string()) {
        type = it->get<std::string>();
        break;
      }
    }
    const auto factor = scaling->find("factor");
    if (type == "llama3" && factor != scaling->end() && factor->is_number() &&
        factor->get<double>() > 0) {
      m.rope_scaling_factor = factor->get<double>();
    }
  }
}

// The architectures the importer reads: transformers' model_type and the class name its
// `architectures` list gives. Any other is an error rather than a guess (a llama4_text read as
// a dense Llama would drop its experts).
struct KnownArchitecture {
  const char* model_type;
  const char* architecture;
};
constexpr KnownArchitecture kKnownArchitectures[] = {
    {"llama", "LlamaForCausalLM"},
    {"mistral", "MistralForCausalLM"},
    {"mixtral", "MixtralForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"},
    {"qwen2_moe", "Qwen2MoeForCausalLM"},
    {"qwen3", "Qwen3ForCausalLM"},
    {"qwen3_moe", "Qwen3MoeForCausalLM"},
    {"deepseek_v2", "DeepseekV2ForCausalLM"},
    {"deepseek_v3", "DeepseekV3ForCausalLM"},
    {"gpt2", "GPT2LMHeadModel"},
    {"bloom", "BloomForCausalLM"},
};

std::string known_model_types() {
  std::string out;
  for (const auto& known : kKnownArchitectures) {
    out += std::string(out.empty() ? "" : ", ") + "\"" + known.model_type + "\"";
  }
  return out;
}

// The config's model_type (else the model_type of its first `architectures` class), checked
// against kKnownArchitectures.
std::string supported_model_type(const HfReader& in, const std::string& file) {
  const std::string allowed =
      "a model_type the importer reads: " + known_model_types() +
      "; describe other models with parplan's model keys (docs/job_file.md#inline-model-object)";
  const std::string model_type = in.string_or("model_type", "");
  if (!model_type.empty()) {
    for (const auto& known : kKnownArchitectures) {
      if (model_type == known.model_type) return model_type;
    }
    throw InputError(file, "model_type", "\"" + model_type + "\" (not supported)", allowed);
  }
  const Json* arch = in.find({"architectures"});
  if (arch && arch->is_array() && !arch->empty() && (*arch)[0].is_string()) {
    const auto& name = (*arch)[0].get_ref<const std::string&>();
    for (const auto& known : kKnownArchitectures) {
      if (name == known.architecture) return known.model_type;
    }
    throw InputError(file, "architectures[0]", describe_json_value((*arch)[0]) + " (not supported)",
                     allowed);
  }
  throw InputError(file, "model_type", "nothing (no model_type and no architectures class)",
                   allowed);
}

}  // namespace

bool is_hf_config(const Json& object) {
  return object.is_object() && (object.contains("architectures") || object.contains("model_type"));
}

ModelSpec import_hf_config(const Json& object, const std::string& file) {
  if (!object.is_object()) {
    throw InputError(file, "(top level)", describe_json_value(object), "a JSON object");
  }
  HfReader in(object, file);
  const std::string model_type = supported_model_type(in, file);

  ModelSpec m;
  const std::string stem = std::filesystem::path(file).parent_path().filename().string();
  m.name = in.string_or("_name_or_path", stem.empty() ? model_type : stem);
  const bool gpt2 = model_type == "gpt2";
  const bool bloom = model_type == "bloom";
  std::string positions_key;
  if (const Json* positions = in.find({"max_position_embeddings", "n_positions"}, &positions_key)) {
    m.max_position_embeddings = json_to_int(*positions, file, positions_key, 1, kMaxModelSeqLength);
    m.max_position_source = file + " " + positions_key;
  }

  m.num_layers = in.require_int({"num_hidden_layers", "n_layer", "num_layers"}, 1, kMaxModelLayers);
  // BLOOM's own config.json (bigscience/bloom) still spells the width "n_embed".
  m.hidden_size =
      in.require_int({"hidden_size", "n_embd", "n_embed", "d_model"}, 1, kMaxModelWidth);
  m.num_attention_heads = in.require_int({"num_attention_heads", "n_head"}, 1, kMaxModelHeads);
  std::string groups_key = "num_key_value_heads";
  if (const Json* groups = in.find({"num_key_value_heads", "multi_query_group_num"}, &groups_key)) {
    m.num_query_groups = json_to_int(*groups, file, groups_key, 1, kMaxModelHeads);
    if (m.num_attention_heads % m.num_query_groups != 0) {
      throw InputError(
          file, groups_key, std::to_string(m.num_query_groups),
          "a divisor of num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
    }
  } else {
    m.num_query_groups = m.num_attention_heads;
  }
  m.vocab_size = in.require_int({"vocab_size", "padded_vocab_size"}, 1, kMaxModelVocab);
  if (auto head_dim = in.optional_int({"head_dim"}, 1, kMaxModelWidth)) {
    m.head_dim = *head_dim;
  } else {
    if (m.hidden_size % m.num_attention_heads != 0) {
      throw InputError(file, "num_attention_heads", std::to_string(m.num_attention_heads),
                       "a divisor of hidden_size, or a head_dim key");
    }
    m.head_dim = m.hidden_size / m.num_attention_heads;
  }

  if (gpt2 || bloom) {
    // GPT-2 and BLOOM: 4h GeLU MLP, LayerNorm, tied embeddings by default (transformers'
    // GPT2Config / BloomConfig); GPT-2 learns positions, BLOOM uses ALiBi.
    m.ffn_hidden_size =
        in.optional_int({"n_inner"}, 1, kMaxModelFfnWidth).value_or(4 * m.hidden_size);
    m.activation = Activation::Gelu;
    m.normalization = Normalization::LayerNorm;
    m.position_embedding = bloom ? PositionEmbedding::Alibi : PositionEmbedding::Learned;
    m.tied_embeddings = in.optional_bool("tie_word_embeddings").value_or(true);
    m.linear_bias = true;
    m.qkv_bias = true;
  } else {
    m.ffn_hidden_size =
        in.require_int({"intermediate_size", "ffn_hidden_size", "n_inner"}, 1, kMaxModelFfnWidth);
    const std::string act = in.string_or("hidden_act", in.string_or("activation_function", "silu"));
    m.activation = (act == "silu" || act == "swish" || act == "swiglu") ? Activation::Swiglu
                                                                        : Activation::Gelu;
    m.normalization = (in.find({"rms_norm_eps"}) != nullptr || m.activation == Activation::Swiglu)
                          ? Normalization::RmsNorm
                          : Normalization::LayerNorm;
    m.position_embedding = PositionEmbedding::Rotary;
    m.tied_embeddings = in.optional_bool("tie_word_embeddings").value_or(false);
    read_rotary_details(in, model_type, m);
  }

  // Mixture of experts: Mixtral (num_local_experts), Qwen-MoE (num_experts,
  // moe_intermediate_size, shared_expert_intermediate_size, decoder_sparse_step,
  // mlp_only_layers), DeepSeek (n_routed_experts, n_shared_experts, first_k_dense_replace,
  // moe_layer_freq).
  if (auto experts = in.optional_int({"num_local_experts", "n_routed_experts", "num_experts"}, 1,
                                     kMaxModelExperts);
      experts && *experts > 1) {
    MoeSpec moe;
    moe.num_experts = *experts;
    moe.top_k = in.optional_int({"num_experts_per_tok", "top_k"}, 1, kMaxModelExperts).value_or(2);
    moe.expert_ffn_hidden_size = in.optional_int({"moe_intermediate_size"}, 1, kMaxModelFfnWidth)
                                     .value_or(m.ffn_hidden_size);
    moe.num_shared_experts = in.optional_int({"n_shared_experts"}, 0, kMaxModelExperts).value_or(0);
    if (moe.num_shared_experts > kMaxModelFfnWidth / moe.expert_ffn_hidden_size) {
      throw InputError(file, "n_shared_experts", std::to_string(moe.num_shared_experts),
                       "a count whose shared experts together are at most " +
                           std::to_string(kMaxModelFfnWidth) + " wide");
    }
    moe.shared_expert_ffn_hidden_size = moe.num_shared_experts * moe.expert_ffn_hidden_size;
    if (auto shared = in.optional_int({"shared_expert_intermediate_size"}, 0, kMaxModelFfnWidth);
        shared && *shared > 0) {
      moe.num_shared_experts = 1;
      moe.shared_expert_ffn_hidden_size = *shared;
    }
    place_moe_layers(in, file, m.num_layers, moe);
    if (moe.top_k > moe.num_experts) {
      throw InputError(file, "num_experts_per_tok", std::to_string(moe.top_k),
                       "at most the number of experts (" + std::to_string(moe.num_experts) + ")");
    }
    m.moe = moe;
  }

  // Multi-latent attention (DeepSeek-V2/V3).
  if (auto kv_rank = in.optional_int({"kv_lora_rank"}, 1, kMaxModelWidth)) {
    MlaSpec mla;
    mla.kv_lora_rank = *kv_rank;
    mla.q_lora_rank = in.optional_int({"q_lora_rank"}, 0, kMaxModelWidth).value_or(0);
    mla.qk_nope_head_dim = in.require_int({"qk_nope_head_dim"}, 1, kMaxModelWidth);
    mla.qk_rope_head_dim = in.optional_int({"qk_rope_head_dim"}, 0, kMaxModelWidth).value_or(0);
    mla.v_head_dim = in.require_int({"v_head_dim"}, 1, kMaxModelWidth);
    m.mla = mla;
    m.head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  }

  validate_model_spec(m, file, "");
  return m;
}

}  // namespace parplan
