// A Megatron-Bridge ConfigContainer override (YAML) read back into a job: the fields of
// launch_nemo.cpp (model.* Megatron-Core TransformerConfig/ModelParallelConfig/GPTModelProvider
// fields, train.*, dataset.*, ddp.*, dist.*, peft.*, mixed_precision), defaults as Bridge's.
#include <cctype>

#include "core/check.h"
#include "tools/import/import_job.h"

namespace parplan::tools {

namespace {

void read_model(SettingTable& s, ImportDraft& d) {
  Json& m = d.model;
  const int64_t layers = s.required_integer("model.num_layers");
  if (layers > kMaxModelLayers) {
    s.fail(*s.get("model.num_layers"), std::to_string(layers),
           "at most " + std::to_string(kMaxModelLayers) + " layers");
  }
  m["num_layers"] = layers;
  m["hidden_size"] = s.required_integer("model.hidden_size");
  m["num_attention_heads"] = s.required_integer("model.num_attention_heads");
  if (auto v = s.integer("model.ffn_hidden_size")) m["ffn_hidden_size"] = *v;
  if (auto v = s.integer("model.num_query_groups")) m["num_query_groups"] = *v;
  if (auto v = s.integer("model.kv_channels")) m["head_dim"] = *v;
  if (auto v = s.integer("model.vocab_size")) m["vocab_size"] = *v;
  const bool gated = s.boolean("model.gated_linear_unit").value_or(false);
  s.get("model.activation_func");
  m["activation"] = gated ? "swiglu" : "gelu";
  m["normalization"] =
      s.text("model.normalization").value_or("LayerNorm") == "RMSNorm" ? "rmsnorm" : "layernorm";
  const auto position = s.text("model.position_embedding_type").value_or("learned_absolute");
  if (position == "rope") {
    m["position_embedding"] = "rotary";
    m["rotary_base"] = s.number("model.rotary_base").value_or(10000);
    if (s.boolean("model.rope_scaling").value_or(false)) {
      m["rope_scaling_factor"] = s.number("model.rope_scaling_factor").value_or(1.0);
    }
  } else if (position == "learned_absolute") {
    m["position_embedding"] = "learned";
  } else {
    s.fail(*s.get("model.position_embedding_type"), position, "rope or learned_absolute");
  }
  const bool bias = s.boolean("model.add_bias_linear").value_or(true);
  m["linear_bias"] = bias;
  // Megatron-Core's default: qkv biases with the others.
  m["qkv_bias"] = s.boolean("model.add_qkv_bias").value_or(bias);
  m["qk_norm"] = s.boolean("model.qk_layernorm").value_or(false);
  m["tied_embeddings"] = s.boolean("model.share_embeddings_and_output_weights").value_or(true);
  if (auto kv = s.integer("model.kv_lora_rank")) {
    m["mla"] = {{"q_lora_rank", s.integer("model.q_lora_rank").value_or(0)},
                {"kv_lora_rank", *kv},
                {"qk_nope_head_dim", s.required_integer("model.qk_head_dim")},
                {"qk_rope_head_dim", s.required_integer("model.qk_pos_emb_head_dim")},
                {"v_head_dim", s.required_integer("model.v_head_dim")}};
  }
  if (auto experts = s.integer("model.num_moe_experts")) {
    Json moe = {{"num_experts", *experts},
                {"top_k", s.integer("model.moe_router_topk").value_or(2)},
                {"expert_ffn_hidden_size", s.required_integer("model.moe_ffn_hidden_size")}};
    if (auto shared = s.integer("model.moe_shared_expert_intermediate_size")) {
      moe["num_shared_experts"] = 1;
      moe["shared_expert_ffn_hidden_size"] = *shared;
    }
    if (const LaunchSetting* freq = s.get("model.moe_layer_freq")) {
      std::vector<int> pattern;
      const auto items = split_flow_list(freq->value);
      if (!items) {
        const int64_t k = s.integer("model.moe_layer_freq").value_or(1);
        for (int64_t l = 0; l < m["num_layers"].get<int64_t>(); ++l) pattern.push_back(l % k == 0);
      } else {
        for (const std::string& v : *items) {
          if (v != "0" && v != "1") s.fail(*freq, freq->value, "a list of 0 and 1");
          pattern.push_back(v == "1");
        }
      }
      const auto placement = moe_placement(pattern);
      if (!placement || static_cast<int64_t>(pattern.size()) != m["num_layers"].get<int64_t>()) {
        s.fail(*freq, freq->value, "one entry per layer: dense first, then MoE every k layers");
      }
      moe["first_dense_layers"] = placement->first;
      moe["moe_layer_frequency"] = placement->second;
    }
    m["moe"] = moe;
  }
}

// "Et*3|t*2|t*2L" -> {3, 2, 2}, as Megatron-LM's layout flag.
std::vector<int64_t> layout_chunks(SettingTable& s, const LaunchSetting& setting) {
  std::vector<int64_t> chunks(1, 0);
  const std::string& v = setting.value;
  const std::string allowed = "E, t and L with optional *N (N up to " +
                              std::to_string(kMaxLaunchInteger) + "), chunks split by |";
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '|') {
      chunks.push_back(0);
      if (chunks.size() > static_cast<std::size_t>(kMaxPipelineChunks)) s.fail(setting, v, allowed);
    } else if (c == 't') {
      int64_t n = 1;
      if (i + 1 < v.size() && v[i + 1] == '*') {
        std::size_t end = i + 2;
        while (end < v.size() && std::isdigit(static_cast<unsigned char>(v[end]))) ++end;
        const auto count = parse_launch_count(std::string_view(v).substr(i + 2, end - i - 2));
        if (!count) s.fail(setting, v, allowed);
        n = *count;
        i = end - 1;
      }
      if (chunks.back() > kMaxLaunchInteger) s.fail(setting, v, allowed);
      chunks.back() += n;
    } else if (c != 'E' && c != 'L' && c != ' ' && c != ',') {
      s.fail(setting, v, allowed);
    }
  }
  return chunks;
}

void read_plan(SettingTable& s, ImportDraft& d) {
  Json& p = d.plan;
  const int64_t pp = s.integer("model.pipeline_model_parallel_size").value_or(1);
  const int64_t layers = d.model["num_layers"].get<int64_t>();
  if (pp > layers + kEndChunksWithoutLayers) {
    s.fail(*s.get("model.pipeline_model_parallel_size"), std::to_string(pp),
           "at most model.num_layers + 2 (" + std::to_string(layers + kEndChunksWithoutLayers) +
               ") stages");
  }
  p["tp"] = s.integer("model.tensor_model_parallel_size").value_or(1);
  p["pp"] = pp;
  p["cp"] = s.integer("model.context_parallel_size").value_or(1);
  p["ep"] = s.integer("model.expert_model_parallel_size").value_or(1);
  d.expert_tp = s.integer("model.expert_tensor_parallel_size");
  int64_t vpp = s.integer("model.virtual_pipeline_model_parallel_size").value_or(1);
  s.get("model.account_for_embedding_in_pipeline_split");
  s.get("model.account_for_loss_in_pipeline_split");
  const LaunchSetting* layout = s.get("model.pipeline_model_parallel_layout");
  if (layout && layout->value != "null" && layout->value != "~" && !layout->value.empty()) {
    d.chunk_layers = layout_chunks(s, *layout);
    vpp = static_cast<int64_t>(d.chunk_layers.size()) / pp;
  }
  const auto first = s.integer("model.num_layers_in_first_pipeline_stage");
  const int64_t last = s.integer("model.num_layers_in_last_pipeline_stage").value_or(0);
  if (d.chunk_layers.empty() && first && pp > 1) {
    const int64_t middle = pp > 2 ? (layers - *first - last) / (pp - 2) : 0;
    d.chunk_layers.assign(pp, middle);
    d.chunk_layers.front() = *first;
    d.chunk_layers.back() = last;
  }
  p["vpp"] = vpp;
  p["schedule"] = vpp > 1 ? "interleaved" : "1f1b";
  p["micro_batch_size"] = s.integer("train.micro_batch_size").value_or(1);
  p["sequence_parallel"] = s.boolean("model.sequence_parallel").value_or(false);
  const auto granularity = s.text("model.recompute_granularity");
  p["recompute"] = granularity && *granularity != "null" ? *granularity : "none";
  if (const LaunchSetting* modules = s.get("model.recompute_modules");
      modules && modules->value != "null") {
    const auto items = split_flow_list(modules->value);
    if (!items) s.fail(*modules, modules->value, "a list of Megatron module names, [a, b]");
    p["recompute_modules"] = *items;
  }
  const bool offloading = s.boolean("model.cpu_offloading").value_or(false);
  const auto offloaded = s.count("model.cpu_offloading_num_layers");
  if (offloading && offloaded && *offloaded > 0) p["offload_activation_layers"] = *offloaded;
  if (s.boolean("model.cpu_offloading_weights").value_or(false)) {
    d.notes.push_back(
        "model.cpu_offloading_weights: the launch offloads weights too; parplan models "
        "activation offloading only");
  }
  const auto method = s.text("model.recompute_method");
  const auto recomputed = s.integer("model.recompute_num_layers");
  if (granularity == "full" &&
      ((method && *method == "block") || (recomputed && *recomputed != 1))) {
    d.notes.push_back(
        "plan.recompute: the launch recomputes part of the layers; parplan models "
        "full recomputation of every layer");
  }
  if (s.boolean("dist.use_tp_pp_dp_mapping").value_or(false)) p["order"] = "tp-cp-ep-pp-dp";
  const bool in_ddp = s.boolean("ddp.use_distributed_optimizer").value_or(false);
  const bool in_optimizer = s.boolean("optimizer.use_distributed_optimizer").value_or(false);
  const bool distributed = in_ddp || in_optimizer;
  int zero = distributed ? 1 : 0;
  if (s.boolean("ddp.use_megatron_fsdp").value_or(false)) {
    zero = s.text("ddp.data_parallel_sharding_strategy").value_or("optim_grads_params") ==
                   "optim_grads"
               ? 2
               : 3;
  }
  p["zero_stage"] = zero;
  if (auto instances = s.integer("ddp.num_distributed_optimizer_instances");
      instances && zero == 1) {
    d.optimizer_instances = *instances;
  }
}

// The MoE token dispatcher (model.moe_token_dispatcher_type, model.moe_flex_dispatcher_backend:
// Bridge's validate_flex_dispatcher_backend falls back to alltoall on a null backend) and the
// batch-level overlap (comm_overlap.overlap_moe_expert_parallel_comm, which CommOverlapConfig
// copies onto the model, else the model's own field). Absent fields are the recipe's.
void read_moe_dispatch(SettingTable& s, ImportDraft& d) {
  const LaunchSetting* type = s.get("model.moe_token_dispatcher_type");
  const LaunchSetting* backend = s.get("model.moe_flex_dispatcher_backend");
  const auto in_comm_overlap = s.boolean("comm_overlap.overlap_moe_expert_parallel_comm");
  const auto in_model = s.boolean("model.overlap_moe_expert_parallel_comm");
  const auto delay_wgrad = s.boolean("comm_overlap.delay_wgrad_compute");
  const auto model_delay_wgrad = s.boolean("model.delay_wgrad_compute");
  s.get("model.moe_shared_expert_overlap");
  if (!d.model.contains("moe")) return;
  std::optional<std::string> kind;
  if (type) kind = type->value;
  if (kind == "flex") {
    kind = backend ? backend->value : "null";
    if (kind == "null" || kind == "~") {
      kind = "alltoall";
    } else if (kind != "deepep" && kind != "hybridep") {
      s.fail(*backend, *kind, "deepep, hybridep or null (parplan models no ncclep)");
    }
  } else if (kind && kind != "alltoall" && kind != "allgather") {
    s.fail(*type, *kind, "allgather, alltoall or flex");
  }
  record_moe_dispatch(d, kind, "model.moe_token_dispatcher_type",
                      in_comm_overlap.value_or(in_model.value_or(false)),
                      delay_wgrad.value_or(model_delay_wgrad.value_or(false)),
                      "delay_wgrad_compute");
}

// A preset name, or the MixedPrecisionConfig fields (fp8 set: fp8 training).
std::string read_precision(SettingTable& s, ImportDraft& d) {
  if (auto preset = s.text("mixed_precision"); preset && (*preset == "null" || *preset == "~")) {
    return "fp32";  // no mixed precision
  } else if (preset && !preset->empty()) {
    if (preset->find("fp8") != std::string::npos || preset->find("mxfp8") != std::string::npos) {
      return "fp8";
    }
    if (preset->rfind("fp16", 0) == 0 || *preset == "16-mixed") return "fp16";
    if (preset->rfind("bf16", 0) == 0) return "bf16";
    if (*preset == "fp32" || *preset == "32") return "fp32";
    s.fail(*s.get("mixed_precision"), *preset,
           "a mixed_precision preset (bf16_mixed, fp16_mixed, bf16_with_*fp8*) or its fields");
  }
  const auto fp8 = s.text("mixed_precision.fp8");
  if (const auto gather = s.boolean("mixed_precision.fp8_param_gather")) {
    d.fp8_param_gather = *gather;
  }
  if (const auto reuse = s.boolean("mixed_precision.reuse_grad_buf_for_mxfp8_param_ag")) {
    d.fp8_reuse_grad_buf = *reuse;
  }
  s.mark_read_prefix("mixed_precision.");
  if (fp8 && !fp8->empty() && *fp8 != "null") return "fp8";
  if (s.boolean("mixed_precision.fp16").value_or(false)) return "fp16";
  if (s.boolean("mixed_precision.bf16").value_or(false)) return "bf16";
  return "fp32";  // no mixed_precision: the recipe's, fp32 by ConfigContainer's default
}

}  // namespace

ImportDraft read_nemo_launch(SettingTable& s) {
  ImportDraft d;
  d.framework = "megatron-core";
  read_model(s, d);
  read_plan(s, d);
  read_moe_dispatch(s, d);
  Json& t = d.training;
  t["global_batch_size"] = s.required_integer("train.global_batch_size");
  const auto seq = s.integer("dataset.seq_length");
  t["seq_length"] = seq ? *seq : s.required_integer("model.seq_length");
  s.get("model.seq_length");
  t["precision"] = read_precision(s, d);
  if (auto rank = s.integer("peft.dim")) {
    t["method"] = "lora";
    t["lora_rank"] = *rank;
  } else {
    const auto base = s.text("checkpoint.pretrained_checkpoint");
    t["method"] = base && !base->empty() && *base != "null" ? "sft" : "pretrain";
  }
  // DistributedDataParallelConfig leaves both off; recipes usually turn them on.
  d.overlaps_grad_reduce = s.boolean("ddp.overlap_grad_reduce").value_or(true);
  d.overlaps_param_gather = s.boolean("ddp.overlap_param_gather").value_or(true);
  // Read, with no effect on the prediction.
  for (const char* prefix :
       {"checkpoint.", "tokenizer.", "train.train_iters", "comm_overlap.", "ddp.overlap_",
        "model.attention_dropout", "model.hidden_dropout", "model.make_vocab_size_divisible_by",
        "model.moe_grouped_gemm", "optimizer.lr", "dataset.", "env_vars."}) {
    s.mark_read_prefix(prefix);
  }
  return d;
}

}  // namespace parplan::tools
