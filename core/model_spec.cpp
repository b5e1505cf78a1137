#include "core/model_spec.h"

#include <cstdio>

#include "core/check.h"

namespace parplan {

namespace {
constexpr int64_t kMaxLayers = kMaxModelLayers;
constexpr int64_t kMaxWidth = kMaxModelWidth;
constexpr int64_t kMaxHeads = kMaxModelHeads;
constexpr int64_t kMaxVocab = kMaxModelVocab;
constexpr int64_t kMaxExperts = kMaxModelExperts;

std::string sci(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}
}  // namespace

const char* to_string(Activation activation) {
  return activation == Activation::Swiglu ? "swiglu" : "gelu";
}
const char* to_string(Normalization normalization) {
  return normalization == Normalization::RmsNorm ? "rmsnorm" : "layernorm";
}
const char* to_string(PositionEmbedding position_embedding) {
  switch (position_embedding) {
    case PositionEmbedding::Rotary:
      return "rotary";
    case PositionEmbedding::Alibi:
      return "alibi";
    case PositionEmbedding::Learned:
      break;
  }
  return "learned";
}

int64_t ModelSpec::num_moe_layers() const {
  if (!moe) return 0;
  const int64_t candidates = num_layers - moe->first_dense_layers;
  if (candidates <= 0) return 0;
  return (candidates + moe->moe_layer_frequency - 1) / moe->moe_layer_frequency;
}

int64_t ModelSpec::attention_params() const {
  const int64_t h = hidden_size;
  if (mla) {
    // DeepSeek-V2 §2.1.2: W_DQ (h x q_rank), W_UQ (q_rank x heads*(nope+rope)), W_DKV
    // (h x kv_rank), W_KR (h x rope), W_UK/W_UV (kv_rank x heads*(nope + v)), W_O.
    const int64_t qk_dim = mla->qk_nope_head_dim + mla->qk_rope_head_dim;
    const int64_t q_params =
        mla->q_lora_rank > 0
            ? h * mla->q_lora_rank + mla->q_lora_rank * num_attention_heads * qk_dim
            : h * num_attention_heads * qk_dim;
    const int64_t kv_params =
        h * (mla->kv_lora_rank + mla->qk_rope_head_dim) +
        mla->kv_lora_rank * num_attention_heads * (mla->qk_nope_head_dim + mla->v_head_dim);
    const int64_t out_params = num_attention_heads * mla->v_head_dim * h;
    return q_params + kv_params + out_params;
  }
  return h * (query_width() + 2 * kv_width()) + query_width() * h;
}

int64_t ModelSpec::dense_mlp_params() const {
  return mlp_matrices() * hidden_size * ffn_hidden_size;
}

int64_t ModelSpec::norm_params_per_layer() const {
  const int64_t per_norm =
      normalization == Normalization::LayerNorm ? 2 * hidden_size : hidden_size;
  return 2 * per_norm;
}

int64_t ModelSpec::routed_expert_params() const {
  return moe ? mlp_matrices() * hidden_size * moe->expert_ffn_hidden_size : 0;
}

int64_t ModelSpec::moe_mlp_params() const {
  if (!moe) return 0;
  const int64_t router = hidden_size * moe->num_experts;
  const int64_t shared = mlp_matrices() * hidden_size * moe->shared_expert_ffn_hidden_size;
  return router + moe->num_experts * routed_expert_params() + shared;
}

int64_t ModelSpec::layer_params(int64_t layer) const {
  const int64_t mlp = is_moe_layer(layer) ? moe_mlp_params() : dense_mlp_params();
  return attention_params() + mlp + norm_params_per_layer();
}

int64_t ModelSpec::embedding_params(int64_t seq_length) const {
  const int64_t position =
      position_embedding == PositionEmbedding::Learned ? seq_length * hidden_size : 0;
  return vocab_size * hidden_size + position;
}

int64_t ModelSpec::output_layer_params() const {
  return tied_embeddings ? 0 : vocab_size * hidden_size;
}

int64_t ModelSpec::total_params(int64_t seq_length) const {
  int64_t total = embedding_params(seq_length) + output_layer_params();
  const int64_t final_norm =
      normalization == Normalization::LayerNorm ? 2 * hidden_size : hidden_size;
  total += final_norm;
  const int64_t moe_layers = num_moe_layers();
  const int64_t dense_layers = num_layers - moe_layers;
  total += dense_layers * (attention_params() + dense_mlp_params() + norm_params_per_layer());
  total += moe_layers * (attention_params() + moe_mlp_params() + norm_params_per_layer());
  return total;
}

int64_t ModelSpec::active_params(int64_t seq_length) const {
  if (!moe) return total_params(seq_length);
  const int64_t inactive_experts = moe->num_experts - moe->top_k;
  return total_params(seq_length) - num_moe_layers() * inactive_experts * routed_expert_params();
}

ModelSpec parse_model_spec(const Json& object, const std::string& file, const std::string& path) {
  JsonReader in(object, file, path);
  ModelSpec m;
  m.name = in.require_string("name");
  m.num_layers = in.require_int("num_layers", 1, kMaxLayers);
  m.hidden_size = in.require_int("hidden_size", 1, kMaxWidth);
  m.num_attention_heads = in.require_int("num_attention_heads", 1, kMaxHeads);
  m.num_query_groups = in.int_or("num_query_groups", m.num_attention_heads, 1, kMaxHeads);
  const auto head_dim = in.optional_int("head_dim", 1, kMaxWidth);
  m.ffn_hidden_size = in.int_or("ffn_hidden_size", 4 * m.hidden_size, 1, kMaxModelFfnWidth);
  m.vocab_size = in.require_int("vocab_size", 1, kMaxVocab);
  m.activation = in.choice_or("activation", "gelu", {"gelu", "swiglu"}) == "swiglu"
                     ? Activation::Swiglu
                     : Activation::Gelu;
  m.normalization =
      in.choice_or("normalization", "layernorm", {"layernorm", "rmsnorm"}) == "rmsnorm"
          ? Normalization::RmsNorm
          : Normalization::LayerNorm;
  // Default: rotary for Llama-style (RMSNorm) models, learned for GPT-style ones.
  const std::string position = in.choice_or(
      "position_embedding", m.normalization == Normalization::RmsNorm ? "rotary" : "learned",
      {"learned", "rotary", "alibi"});
  m.position_embedding = position == "rotary"  ? PositionEmbedding::Rotary
                         : position == "alibi" ? PositionEmbedding::Alibi
                                               : PositionEmbedding::Learned;
  m.tied_embeddings = in.bool_or("tied_embeddings", true);
  // Default: biases in GPT-style (LayerNorm) models, none in Llama-style (RMSNorm) ones.
  m.linear_bias = in.bool_or("linear_bias", m.normalization == Normalization::LayerNorm);
  m.qkv_bias = in.bool_or("qkv_bias", m.linear_bias);
  m.qk_norm = in.bool_or("qk_norm", false);
  m.rotary_base = in.number_or("rotary_base", 10000.0, 1.0, 1e12);
  m.rope_scaling_factor = in.number_or("rope_scaling_factor", 0.0, 0.0, 1e6);
  m.max_position_embeddings = in.int_or("max_position_embeddings", 0, 0, kMaxModelSeqLength);
  if (m.max_position_embeddings > 0) {
    m.max_position_source = file + " " + in.path_of("max_position_embeddings");
  }
  in.allow("description");
  in.allow("source");

  if (head_dim) {
    m.head_dim = *head_dim;
  } else {
    if (m.hidden_size % m.num_attention_heads != 0) {
      in.fail("num_attention_heads", std::to_string(m.num_attention_heads),
              "a divisor of hidden_size (" + std::to_string(m.hidden_size) +
                  "), or give head_dim explicitly");
    }
    m.head_dim = m.hidden_size / m.num_attention_heads;
  }

  if (auto moe = in.optional_object("moe")) {
    MoeSpec spec;
    spec.num_experts = moe->require_int("num_experts", 1, kMaxExperts);
    spec.top_k = moe->int_or("top_k", 1, 1, spec.num_experts);
    spec.expert_ffn_hidden_size =
        moe->int_or("expert_ffn_hidden_size", m.ffn_hidden_size, 1, kMaxModelFfnWidth);
    spec.num_shared_experts = moe->int_or("num_shared_experts", 0, 0, kMaxExperts);
    const auto shared_width =
        moe->optional_int("shared_expert_ffn_hidden_size", 0, kMaxModelFfnWidth);
    if (!shared_width &&
        spec.num_shared_experts > kMaxModelFfnWidth / spec.expert_ffn_hidden_size) {
      moe->fail("num_shared_experts", std::to_string(spec.num_shared_experts),
                "a count whose shared experts together are at most " +
                    std::to_string(kMaxModelFfnWidth) +
                    " wide (num_shared_experts x "
                    "expert_ffn_hidden_size), or give shared_expert_ffn_hidden_size");
    }
    spec.shared_expert_ffn_hidden_size =
        shared_width.value_or(spec.num_shared_experts * spec.expert_ffn_hidden_size);
    spec.moe_layer_frequency = moe->int_or("moe_layer_frequency", 1, 1, kMaxLayers);
    spec.first_dense_layers = moe->int_or("first_dense_layers", 0, 0, m.num_layers);
    moe->finish();
    m.moe = spec;
  }
  if (auto mla = in.optional_object("mla")) {
    MlaSpec spec;
    spec.q_lora_rank = mla->int_or("q_lora_rank", 0, 0, kMaxWidth);
    spec.kv_lora_rank = mla->require_int("kv_lora_rank", 1, kMaxWidth);
    spec.qk_nope_head_dim = mla->require_int("qk_nope_head_dim", 1, kMaxWidth);
    spec.qk_rope_head_dim = mla->require_int("qk_rope_head_dim", 0, kMaxWidth);
    spec.v_head_dim = mla->require_int("v_head_dim", 1, kMaxWidth);
    mla->finish();
    m.mla = spec;
  }
  in.finish();
  validate_model_spec(m, file, path);
  return m;
}

double model_params_in_double(const ModelSpec& m, int64_t seq_length) {
  // The same terms as total_params() above, in double (tests/core/model_spec_test.cpp checks
  // that the two agree on every preset).
  const double h = static_cast<double>(m.hidden_size);
  const double heads = static_cast<double>(m.num_attention_heads);
  const double qw = heads * static_cast<double>(m.head_dim);
  const double kvw = static_cast<double>(m.num_query_groups) * static_cast<double>(m.head_dim);
  double attention = h * (qw + 2 * kvw) + qw * h;
  if (m.mla) {
    const double q_rank = static_cast<double>(m.mla->q_lora_rank);
    const double kv_rank = static_cast<double>(m.mla->kv_lora_rank);
    const double nope = static_cast<double>(m.mla->qk_nope_head_dim);
    const double rope = static_cast<double>(m.mla->qk_rope_head_dim);
    const double v = static_cast<double>(m.mla->v_head_dim);
    const double q =
        q_rank > 0 ? h * q_rank + q_rank * heads * (nope + rope) : h * heads * (nope + rope);
    attention = q + h * (kv_rank + rope) + kv_rank * heads * (nope + v) + heads * v * h;
  }
  const double matrices = static_cast<double>(m.mlp_matrices());
  const double per_norm = m.normalization == Normalization::LayerNorm ? 2 * h : h;
  const double norms = 2 * per_norm;
  const double dense = matrices * h * static_cast<double>(m.ffn_hidden_size);
  double moe = 0;
  double moe_layers = 0;
  if (m.moe) {
    const double experts = static_cast<double>(m.moe->num_experts);
    const double routed = matrices * h * static_cast<double>(m.moe->expert_ffn_hidden_size);
    const double shared = matrices * h * static_cast<double>(m.moe->shared_expert_ffn_hidden_size);
    moe = h * experts + experts * routed + shared;
    moe_layers = static_cast<double>(m.num_moe_layers());
  }
  const double layers = static_cast<double>(m.num_layers);
  const double vocab = static_cast<double>(m.vocab_size);
  const double position = m.position_embedding == PositionEmbedding::Learned
                              ? static_cast<double>(seq_length) * h
                              : 0.0;
  const double output = m.tied_embeddings ? 0.0 : vocab * h;
  return vocab * h + position + output + per_norm +
         (layers - moe_layers) * (attention + dense + norms) +
         moe_layers * (attention + moe + norms);
}

void validate_model_spec(const ModelSpec& m, const std::string& file, const std::string& path) {
  auto key = [&](std::string_view k) { return join_key_path(path, k); };
  // Field bounds (the parsers check them with their own key names; a Hugging Face import or a
  // model built in code is checked here again).
  auto bound = [&](std::string_view k, int64_t value, int64_t min, int64_t max) {
    if (value < min || value > max) {
      throw InputError(file, key(k), std::to_string(value),
                       "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
  };
  bound("num_layers", m.num_layers, 1, kMaxLayers);
  bound("hidden_size", m.hidden_size, 1, kMaxWidth);
  bound("num_attention_heads", m.num_attention_heads, 1, kMaxHeads);
  bound("num_query_groups", m.num_query_groups, 1, kMaxHeads);
  bound("head_dim", m.head_dim, 1, kMaxWidth);
  bound("ffn_hidden_size", m.ffn_hidden_size, 1, kMaxModelFfnWidth);
  bound("vocab_size", m.vocab_size, 1, kMaxVocab);
  if (m.moe) {
    bound("moe.num_experts", m.moe->num_experts, 1, kMaxExperts);
    bound("moe.top_k", m.moe->top_k, 1, m.moe->num_experts);
    bound("moe.expert_ffn_hidden_size", m.moe->expert_ffn_hidden_size, 1, kMaxModelFfnWidth);
    bound("moe.num_shared_experts", m.moe->num_shared_experts, 0, kMaxExperts);
    bound("moe.shared_expert_ffn_hidden_size", m.moe->shared_expert_ffn_hidden_size, 0,
          kMaxModelFfnWidth);
    bound("moe.moe_layer_frequency", m.moe->moe_layer_frequency, 1, kMaxLayers);
    bound("moe.first_dense_layers", m.moe->first_dense_layers, 0, kMaxLayers);
  }
  if (m.mla) {
    bound("mla.q_lora_rank", m.mla->q_lora_rank, 0, kMaxWidth);
    bound("mla.kv_lora_rank", m.mla->kv_lora_rank, 1, kMaxWidth);
    bound("mla.qk_nope_head_dim", m.mla->qk_nope_head_dim, 1, kMaxWidth);
    bound("mla.qk_rope_head_dim", m.mla->qk_rope_head_dim, 0, kMaxWidth);
    bound("mla.v_head_dim", m.mla->v_head_dim, 1, kMaxWidth);
  }
  if (m.num_query_groups > m.num_attention_heads ||
      m.num_attention_heads % m.num_query_groups != 0) {
    throw InputError(
        file, key("num_query_groups"), std::to_string(m.num_query_groups),
        "a divisor of num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
  }
  if (m.moe && m.moe->first_dense_layers >= m.num_layers) {
    throw InputError(file, key("moe.first_dense_layers"), std::to_string(m.moe->first_dense_layers),
                     "fewer than num_layers (" + std::to_string(m.num_layers) + ")");
  }
  // The products: with at most kMaxModelParams parameters every int64 count (each a sum of
  // non-negative terms of this total) stays below 2^53, and byte and FLOP counts stay finite.
  const double params = model_params_in_double(m, kMaxModelSeqLength);
  if (!(params <= kMaxModelParams)) {
    throw InputError(file, path.empty() ? "(model size)" : path,
                     "a model of " + sci(params) + " parameters (num_layers " +
                         std::to_string(m.num_layers) + ", hidden_size " +
                         std::to_string(m.hidden_size) + ")",
                     "at most " + sci(kMaxModelParams) +
                         " parameters; reduce num_layers, the widths or the expert counts");
  }
}

Json model_spec_to_json(const ModelSpec& m) {
  Json out = {{"name", m.name},
              {"num_layers", m.num_layers},
              {"hidden_size", m.hidden_size},
              {"num_attention_heads", m.num_attention_heads},
              {"num_query_groups", m.num_query_groups},
              {"head_dim", m.head_dim},
              {"ffn_hidden_size", m.ffn_hidden_size},
              {"vocab_size", m.vocab_size},
              {"activation", to_string(m.activation)},
              {"normalization", to_string(m.normalization)},
              {"position_embedding", to_string(m.position_embedding)},
              {"tied_embeddings", m.tied_embeddings},
              {"linear_bias", m.linear_bias},
              {"qkv_bias", m.qkv_bias},
              {"qk_norm", m.qk_norm},
              {"rotary_base", m.rotary_base},
              {"rope_scaling_factor", m.rope_scaling_factor}};
  if (m.moe) {
    out["moe"] = {{"num_experts", m.moe->num_experts},
                  {"top_k", m.moe->top_k},
                  {"expert_ffn_hidden_size", m.moe->expert_ffn_hidden_size},
                  {"num_shared_experts", m.moe->num_shared_experts},
                  {"shared_expert_ffn_hidden_size", m.moe->shared_expert_ffn_hidden_size},
                  {"moe_layer_frequency", m.moe->moe_layer_frequency},
                  {"first_dense_layers", m.moe->first_dense_layers}};
  } else {
    out["moe"] = nullptr;
  }
  if (m.mla) {
    out["mla"] = {{"q_lora_rank", m.mla->q_lora_rank},
                  {"kv_lora_rank", m.mla->kv_lora_rank},
                  {"qk_nope_head_dim", m.mla->qk_nope_head_dim},
                  {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                  {"v_head_dim", m.mla->v_head_dim}};
  }
  return out;
}

}  // namespace parplan
