// ParameterBufferLayout: where each parameter tensor of one rank lives in that rank's single
// contiguous parameter buffer (and, at the same offsets, in its gradient buffer), as llm.c
// carves its parameters out of one allocation. A rank holds the model chunks of its pipeline
// stage and, inside them, its tensor-parallel shard of each weight (Megatron: q/k/v, fc1 and
// the embeddings split by rows, proj and fc2 by columns; norms and the position embedding
// replicated). Each local tensor records where its block sits in the full tensor, so
// initialisation depends only on (seed, tensor id, global index). ZeRO-1 shards are
// (offset, size) ranges of the padded buffer. Tested in
// tests/executor/parameter_buffer_layout_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/parallel_plan.h"

namespace parplan::executor {

// Model widths, full and per tensor-parallel rank. Paper letters in comments.
struct ModelDims {
  int64_t num_layers = 0;    // L
  int64_t hidden = 0;        // C
  int64_t heads = 0;         // NH
  int64_t groups = 0;        // key/value heads
  int64_t head_dim = 0;      // d
  int64_t ffn = 0;           // F
  int64_t vocab = 0;         // V
  int64_t vocab_padded = 0;  // V rounded up to a multiple of tp
  int64_t seq = 0;           // T
  int64_t tp = 1;
  bool swiglu = false;
  bool rmsnorm = false;
  bool learned_positions = true;
  bool rotary = false;
  bool tied = true;

  int64_t heads_local() const { return heads / tp; }
  // With tp > groups each rank holds one key/value head, replicated on tp / groups ranks
  // (Megatron-Core's GQA with more tensor-parallel ranks than query groups).
  int64_t groups_local() const { return groups >= tp ? groups / tp : 1; }
  int64_t kv_replicas() const { return groups >= tp ? 1 : tp / groups; }
  int64_t ffn_local() const { return ffn / tp; }
  int64_t vocab_local() const { return vocab_padded / tp; }
  int64_t qkv_local() const { return (heads_local() + 2 * groups_local()) * head_dim; }
  int64_t fc1_local() const { return (swiglu ? 2 : 1) * ffn_local(); }
  // Columns of this rank's logits that are real vocabulary entries.
  int64_t vocab_valid(int64_t tp_rank) const;
};

ModelDims make_model_dims(const ModelSpec& model, int64_t seq_length, int64_t tp);

enum class InitKind { Normal, Ones, Zeros };

struct ParamTensor {
  std::string name;       // e.g. "layers.3.attn.q"
  int64_t tensor_id = 0;  // identity of the full tensor (init stream)
  int64_t offset = 0;     // elements into the rank's buffer
  int64_t rows = 0;       // local block
  int64_t cols = 0;
  int64_t global_cols = 0;  // width of the full tensor
  int64_t row_offset = 0;   // where the local block starts in the full tensor
  int64_t col_offset = 0;
  InitKind init = InitKind::Normal;
  double init_std = 0.02;
  bool weight_decay = true;
  bool tp_replicated = false;  // identical on every tensor-parallel rank
  bool kv_replicated = false;  // a key/value head copied on kv_replicas() tp ranks
  int64_t numel() const { return rows * cols; }
};

// Offsets (elements) of one layer's tensors; -1 where the model has none.
struct LayerOffsets {
  int64_t ln1_w = -1, ln1_b = -1;
  int64_t qkv = -1;   // (q | k | v) rows: qkv_local x C
  int64_t proj = -1;  // C x heads_local*d
  int64_t ln2_w = -1, ln2_b = -1;
  int64_t fc1 = -1;  // fc1_local x C (swiglu: gate rows then up rows)
  int64_t fc2 = -1;  // C x ffn_local
};

struct ChunkLayout {
  int64_t virtual_stage = 0;  // chunk * pp + stage
  int64_t first_layer = 0;
  std::vector<LayerOffsets> layers;
  bool has_embedding = false;  // the first virtual stage
  int64_t wte = -1;            // vocab_local x C
  int64_t wpe = -1;            // T x C (learned positions)
  bool has_head = false;       // the last virtual stage
  int64_t final_norm_w = -1, final_norm_b = -1;
  int64_t output = -1;  // vocab_local x C; == wte when tied on one chunk
};

struct ParameterBufferLayout {
  ModelDims dims;
  std::vector<ParamTensor> tensors;
  std::vector<ChunkLayout> chunks;  // this rank's, index = chunk 0..vpp-1
  int64_t num_params = 0;           // sum of the tensors
  int64_t num_elements = 0;         // buffer size: num_params padded to a multiple of dp
  // Tensors replicated over tp lie in one range; under sequence parallelism each tp rank
  // holds a partial gradient for them, all-reduced over tp (Megatron's
  // allreduce_layernorm_grads).
  int64_t replicated_begin = 0;
  int64_t replicated_end = 0;
  // The word-embedding copy whose gradient is all-reduced between the first and the last
  // pipeline stage (tied embeddings, pp > 1); size 0 elsewhere.
  int64_t tied_offset = 0;
  int64_t tied_size = 0;
};

ParameterBufferLayout make_parameter_buffer_layout(const ModelSpec& model, const ParallelPlan& plan,
                                                   int64_t seq_length, int64_t tp_rank,
                                                   int64_t pp_rank);

// Fills a host copy of the parameter buffer (num_elements values): each element from
// hash_normal(seed, tensor id, its index in the full tensor) * std, norms 1 and 0, padding 0.
template <typename T>
void init_parameters(const ParameterBufferLayout& layout, uint64_t seed, T* host_buffer);

// Global tensor ids.
int64_t word_embedding_id();
int64_t layer_tensor_id(int64_t layer, int64_t kind);

}  // namespace parplan::executor
