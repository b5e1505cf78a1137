// ModelSpec: the transformer being trained, as the job file's "model" key describes it
// (docs/job_file.md#model), with its derived sizes (parameter counts per layer and in total).
// Parameter counts follow Narayanan et al. 2021 (SC21) §5.1 for dense GPT layers; linear
// biases are not counted (they are below 0.1% of any preset). Tested in
// tests/core/model_spec_test.cpp against the published parameter counts of the presets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/json_input.h"

namespace parplan {

// Largest sizes a model may have: far above any published model, and small enough that every
// derived count below fits in 64 bits. Each field has its own bound; kMaxModelParams bounds
// their products (layers x hidden^2 x ..., experts x expert width x hidden), checked in double
// by validate_model_spec before any int64 product is formed.
inline constexpr int64_t kMaxModelLayers = 100'000;
inline constexpr int64_t kMaxModelWidth = 1'000'000;  // hidden, head_dim, MLA ranks
inline constexpr int64_t kMaxModelFfnWidth = 16 * kMaxModelWidth;
inline constexpr int64_t kMaxModelHeads = 100'000;
inline constexpr int64_t kMaxModelVocab = 100'000'000;
inline constexpr int64_t kMaxModelExperts = 1'000'000;
inline constexpr int64_t kMaxModelSeqLength = 100'000'000;  // = training.seq_length's bound
inline constexpr double kMaxModelParams = 1e15;             // ~500x the largest published

enum class Activation { Gelu, Swiglu };
enum class Normalization { LayerNorm, RmsNorm };
enum class PositionEmbedding { Learned, Rotary, Alibi };

struct MoeSpec {
  int64_t num_experts = 0;
  int64_t top_k = 1;
  int64_t expert_ffn_hidden_size = 0;
  int64_t num_shared_experts = 0;
  // Inner width of all shared experts together; default num_shared_experts * expert width.
  int64_t shared_expert_ffn_hidden_size = 0;
  int64_t moe_layer_frequency = 1;  // every k-th layer (after the dense ones) is MoE
  int64_t first_dense_layers = 0;   // leading layers with a dense MLP
};

// Multi-latent attention (DeepSeek-V2/V3): low-rank query and key/value projections.
struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0: the query is projected at full rank
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

struct ModelSpec {
  std::string name;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_query_groups = 0;  // = heads by default (MHA)
  int64_t head_dim = 0;          // = hidden / heads by default
  int64_t ffn_hidden_size = 0;   // = 4 * hidden by default
  int64_t vocab_size = 0;
  Activation activation = Activation::Gelu;
  Normalization normalization = Normalization::LayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::Learned;
  bool tied_embeddings = true;
  // Architecture details a launch needs but the cost model does not (biases are below 0.1% of
  // any preset's parameters): the exports pass them to the frameworks.
  bool linear_bias = false;        // biases in every linear layer (GPT-2/3, BLOOM)
  bool qkv_bias = false;           // biases on the query/key/value projections (Qwen2)
  bool qk_norm = false;            // a norm on each head's queries and keys (Qwen3)
  double rotary_base = 10000;      // RoPE's theta (Su et al. 2021: 10000)
  double rope_scaling_factor = 0;  // Llama 3.x frequency scaling (Llama 3 uses 8); 0: none
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  // The longest sequence the model was trained for (Hugging Face max_position_embeddings or
  // n_positions; the inline key max_position_embeddings); 0 when unknown. Longer
  // training.seq_length is a warning (core/job.cpp), not an error. Not a shape: it changes
  // no cost and is not part of model_spec_to_json.
  int64_t max_position_embeddings = 0;
  std::string max_position_source;  // "FILE KEY" it came from, for the warning

  // --- derived sizes (elements, not bytes) ---
  int64_t query_width() const { return num_attention_heads * head_dim; }
  int64_t kv_width() const { return num_query_groups * head_dim; }
  int64_t mlp_matrices() const { return activation == Activation::Swiglu ? 3 : 2; }
  // Inline: the planner's memory and time models ask it for every layer of every plan.
  bool is_moe_layer(int64_t layer) const {
    if (!moe) return false;
    if (layer < moe->first_dense_layers) return false;
    return (layer - moe->first_dense_layers) % moe->moe_layer_frequency == 0;
  }
  int64_t num_moe_layers() const;
  // MoE layers among the `count` layers from `first` on (closed form of is_moe_layer's count).
  int64_t moe_layers_in(int64_t first, int64_t count) const {
    if (!moe || count <= 0) return 0;
    const int64_t k = moe->first_dense_layers;
    const int64_t f = moe->moe_layer_frequency;
    // MoE layers below `end`: k, k + f, ... < end.
    auto below = [k, f](int64_t end) { return end <= k ? int64_t{0} : (end - k + f - 1) / f; };
    return below(first + count) - below(first);
  }

  int64_t attention_params() const;  // QKV + output projection (+ MLA down/up projections)
  int64_t dense_mlp_params() const;
  int64_t norm_params_per_layer() const;
  // One MoE layer's MLP part: router + routed experts + shared experts.
  int64_t moe_mlp_params() const;
  int64_t routed_expert_params() const;  // one routed expert
  int64_t layer_params(int64_t layer) const;
  int64_t embedding_params(int64_t seq_length) const;  // word (+ learned position) embeddings
  int64_t output_layer_params() const;                 // 0 when tied
  int64_t total_params(int64_t seq_length) const;
  // Parameters that touch one token: routed experts count top_k times instead of E times.
  int64_t active_params(int64_t seq_length) const;
};

// Reads an inline model object (docs/job_file.md#model); `file`/`path` name it in errors.
ModelSpec parse_model_spec(const Json& object, const std::string& file, const std::string& path);

// Checks relations inside one model (query groups divide heads, MoE ranges, ...), every
// field's bound, and that the parameter count (at the longest sequence) is at most
// kMaxModelParams, so that the int64 counts above cannot overflow.
void validate_model_spec(const ModelSpec& model, const std::string& file, const std::string& path);

// Parameters of the model at `seq_length`, computed in double from the fields alone (the
// int64 methods above may overflow on unchecked fields; this cannot).
double model_params_in_double(const ModelSpec& model, int64_t seq_length);

Json model_spec_to_json(const ModelSpec& model);

const char* to_string(Activation activation);
const char* to_string(Normalization normalization);
const char* to_string(PositionEmbedding position_embedding);

}  // namespace parplan
