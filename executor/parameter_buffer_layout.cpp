#include "executor/parameter_buffer_layout.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "executor/deterministic_random.h"

namespace parplan::executor {

namespace {

enum LayerKind : int64_t { kLn1W, kLn1B, kQ, kK, kV, kProj, kLn2W, kLn2B, kFc1, kUp, kFc2 };
constexpr int64_t kWteId = 1;
constexpr int64_t kWpeId = 2;
constexpr int64_t kFinalNormWId = 3;
constexpr int64_t kFinalNormBId = 4;
constexpr int64_t kOutputId = 5;

class Builder {
 public:
  explicit Builder(ParameterBufferLayout& layout) : layout_(layout) {}

  // A block of `rows` x `cols` at (row_offset, col_offset) of a full tensor `global_cols` wide.
  int64_t add(std::string name, int64_t id, int64_t rows, int64_t cols, int64_t global_cols,
              int64_t row_offset, int64_t col_offset, InitKind init, double std, bool decay,
              bool replicated) {
    ParamTensor t;
    t.name = std::move(name);
    t.tensor_id = id;
    t.offset = next_;
    t.rows = rows;
    t.cols = cols;
    t.global_cols = global_cols;
    t.row_offset = row_offset;
    t.col_offset = col_offset;
    t.init = init;
    t.init_std = std;
    t.weight_decay = decay;
    t.tp_replicated = replicated;
    next_ += t.numel();
    layout_.tensors.push_back(std::move(t));
    return layout_.tensors.back().offset;
  }
  // A replicated 1-D norm parameter.
  int64_t norm(std::string name, int64_t id, int64_t width, bool is_weight) {
    return add(std::move(name), id, 1, width, width, 0, 0,
               is_weight ? InitKind::Ones : InitKind::Zeros, 0, false, true);
  }
  int64_t next() const { return next_; }

 private:
  ParameterBufferLayout& layout_;
  int64_t next_ = 0;
};

}  // namespace

int64_t word_embedding_id() { return kWteId; }
int64_t layer_tensor_id(int64_t layer, int64_t kind) { return 100 + layer * 20 + kind; }

int64_t ModelDims::vocab_valid(int64_t tp_rank) const {
  const int64_t start = tp_rank * vocab_local();
  return std::max<int64_t>(0, std::min(vocab_local(), vocab - start));
}

ModelDims make_model_dims(const ModelSpec& model, int64_t seq_length, int64_t tp) {
  ModelDims d;
  d.num_layers = model.num_layers;
  d.hidden = model.hidden_size;
  d.heads = model.num_attention_heads;
  d.groups = model.num_query_groups;
  d.head_dim = model.head_dim;
  d.ffn = model.ffn_hidden_size;
  d.vocab = model.vocab_size;
  d.vocab_padded = (model.vocab_size + tp - 1) / tp * tp;
  d.seq = seq_length;
  d.tp = tp;
  d.swiglu = model.activation == Activation::Swiglu;
  d.rmsnorm = model.normalization == Normalization::RmsNorm;
  d.learned_positions = model.position_embedding == PositionEmbedding::Learned;
  d.rotary = model.position_embedding == PositionEmbedding::Rotary;
  d.tied = model.tied_embeddings;
  return d;
}

ParameterBufferLayout make_parameter_buffer_layout(const ModelSpec& model, const ParallelPlan& plan,
                                                   int64_t seq_length, int64_t tp_rank,
                                                   int64_t pp_rank) {
  ParameterBufferLayout layout;
  const ModelDims d = make_model_dims(model, seq_length, plan.tp);
  layout.dims = d;
  const int64_t C = d.hidden;
  const int64_t hd = d.head_dim;
  const double std = 0.02;
  // GPT-2 / Megatron: output projections of the residual branches scaled by 1/sqrt(2L).
  const double residual_std = std / std::sqrt(2.0 * static_cast<double>(d.num_layers));
  const std::vector<int64_t> split = layers_per_chunk(model, plan);
  const int64_t num_virtual = plan.pp * plan.vpp;
  std::vector<int64_t> first_layer(num_virtual + 1, 0);
  for (int64_t v = 0; v < num_virtual; ++v) first_layer[v + 1] = first_layer[v] + split[v];

  Builder b(layout);
  layout.chunks.resize(plan.vpp);
  // Region 1: tensor-parallel shards (and the embeddings, split by vocabulary rows).
  for (int64_t c = 0; c < plan.vpp; ++c) {
    ChunkLayout& chunk = layout.chunks[c];
    chunk.virtual_stage = c * plan.pp + pp_rank;
    chunk.first_layer = first_layer[chunk.virtual_stage];
    chunk.has_embedding = chunk.virtual_stage == 0;
    chunk.has_head = chunk.virtual_stage == num_virtual - 1;
    const int64_t vl = d.vocab_local();
    if (chunk.has_embedding) {
      chunk.wte = b.add("embedding.word", kWteId, vl, C, C, tp_rank * vl, 0, InitKind::Normal, std,
                        true, false);
    }
    const int64_t num_layers = split[chunk.virtual_stage];
    chunk.layers.resize(num_layers);
    for (int64_t i = 0; i < num_layers; ++i) {
      const int64_t l = chunk.first_layer + i;
      const std::string p = "layers." + std::to_string(l) + ".";
      LayerOffsets& o = chunk.layers[i];
      const int64_t hl = d.heads_local() * hd;
      const int64_t gl = d.groups_local() * hd;
      const int64_t kv_row = (tp_rank / d.kv_replicas()) * gl;
      o.qkv = b.add(p + "attn.q", layer_tensor_id(l, kQ), hl, C, C, tp_rank * hl, 0,
                    InitKind::Normal, std, true, false);
      b.add(p + "attn.k", layer_tensor_id(l, kK), gl, C, C, kv_row, 0, InitKind::Normal, std, true,
            false);
      b.add(p + "attn.v", layer_tensor_id(l, kV), gl, C, C, kv_row, 0, InitKind::Normal, std, true,
            false);
      if (d.kv_replicas() > 1) {
        layout.tensors[layout.tensors.size() - 1].kv_replicated = true;
        layout.tensors[layout.tensors.size() - 2].kv_replicated = true;
      }
      o.proj = b.add(p + "attn.proj", layer_tensor_id(l, kProj), C, hl, d.heads * hd, 0,
                     tp_rank * hl, InitKind::Normal, residual_std, true, false);
      const int64_t fl = d.ffn_local();
      o.fc1 = b.add(p + (d.swiglu ? "mlp.gate" : "mlp.fc1"), layer_tensor_id(l, kFc1), fl, C, C,
                    tp_rank * fl, 0, InitKind::Normal, std, true, false);
      if (d.swiglu) {
        b.add(p + "mlp.up", layer_tensor_id(l, kUp), fl, C, C, tp_rank * fl, 0, InitKind::Normal,
              std, true, false);
      }
      o.fc2 = b.add(p + "mlp.fc2", layer_tensor_id(l, kFc2), C, fl, d.ffn, 0, tp_rank * fl,
                    InitKind::Normal, residual_std, true, false);
    }
    if (chunk.has_head) {
      if (d.tied && chunk.has_embedding) {
        chunk.output = chunk.wte;
      } else {
        // Tied across stages: a copy of the word embedding with the same tensor id, hence the
        // same initial values; gradients are summed between the two stages.
        chunk.output =
            b.add(d.tied ? "output.tied_word_embedding" : "output", d.tied ? kWteId : kOutputId, vl,
                  C, C, tp_rank * vl, 0, InitKind::Normal, std, true, false);
      }
    }
    if (d.tied && num_virtual > 1) {
      if (chunk.has_embedding) {
        layout.tied_offset = chunk.wte;
        layout.tied_size = vl * C;
      } else if (chunk.has_head) {
        layout.tied_offset = chunk.output;
        layout.tied_size = vl * C;
      }
    }
  }
  // Region 2: tensors replicated over tensor parallelism.
  layout.replicated_begin = b.next();
  for (int64_t c = 0; c < plan.vpp; ++c) {
    ChunkLayout& chunk = layout.chunks[c];
    if (chunk.has_embedding && d.learned_positions) {
      chunk.wpe =
          b.add("embedding.position", kWpeId, d.seq, C, C, 0, 0, InitKind::Normal, std, true, true);
    }
    for (std::size_t i = 0; i < chunk.layers.size(); ++i) {
      const int64_t l = chunk.first_layer + static_cast<int64_t>(i);
      const std::string p = "layers." + std::to_string(l) + ".";
      LayerOffsets& o = chunk.layers[i];
      o.ln1_w = b.norm(p + "ln1.weight", layer_tensor_id(l, kLn1W), C, true);
      if (!d.rmsnorm) o.ln1_b = b.norm(p + "ln1.bias", layer_tensor_id(l, kLn1B), C, false);
      o.ln2_w = b.norm(p + "ln2.weight", layer_tensor_id(l, kLn2W), C, true);
      if (!d.rmsnorm) o.ln2_b = b.norm(p + "ln2.bias", layer_tensor_id(l, kLn2B), C, false);
    }
    if (chunk.has_head) {
      chunk.final_norm_w = b.norm("final_norm.weight", kFinalNormWId, C, true);
      if (!d.rmsnorm) chunk.final_norm_b = b.norm("final_norm.bias", kFinalNormBId, C, false);
    }
  }
  layout.replicated_end = b.next();
  layout.num_params = b.next();
  layout.num_elements = (layout.num_params + plan.dp - 1) / plan.dp * plan.dp;
  return layout;
}

template <typename T>
void init_parameters(const ParameterBufferLayout& layout, uint64_t seed, T* host_buffer) {
  std::fill(host_buffer, host_buffer + layout.num_elements, T(0));
  for (const ParamTensor& t : layout.tensors) {
    T* out = host_buffer + t.offset;
    for (int64_t i = 0; i < t.rows; ++i) {
      for (int64_t j = 0; j < t.cols; ++j) {
        T value = 0;
        if (t.init == InitKind::Ones) {
          value = 1;
        } else if (t.init == InitKind::Normal) {
          const auto index =
              static_cast<uint64_t>((t.row_offset + i) * t.global_cols + t.col_offset + j);
          value = static_cast<T>(t.init_std *
                                 hash_normal(seed, static_cast<uint64_t>(t.tensor_id), index));
        }
        out[i * t.cols + j] = value;
      }
    }
  }
}

template void init_parameters<float>(const ParameterBufferLayout&, uint64_t, float*);
template void init_parameters<double>(const ParameterBufferLayout&, uint64_t, double*);

}  // namespace parplan::executor
