// Megatron-LM arguments read back into a job (the flags of launch_megatron.cpp, names from
// NVIDIA/Megatron-LM megatron/training/arguments.py at d98e8a64dd; defaults are Megatron's).
#include <algorithm>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>

#include "core/check.h"
#include "core/presets.h"
#include "tools/import/import_job.h"

namespace parplan::tools {

namespace {

// "([0]*3+[1]*58)", "[0,1,1]" or an integer k (every k-th layer from layer 0): 0/1 per layer.
std::vector<int> megatron_moe_pattern(SettingTable& s, const LaunchSetting& flag, int64_t layers) {
  std::string text = flag.value;
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  std::vector<int> pattern;
  if (std::regex_match(text, std::regex(R"(\d+)"))) {
    const int64_t k = parse_launch_count(text).value_or(0);
    if (k < 1) s.fail(flag, text, "a positive layer frequency");
    for (int64_t l = 0; l < layers; ++l) pattern.push_back(l % k == 0 ? 1 : 0);
    return pattern;
  }
  const std::regex run(R"(\[([01](?:,[01])*)\](?:\*(\d+))?)");
  std::string body = text;
  if (body.size() >= 2 && body.front() == '(' && body.back() == ')') {
    body = body.substr(1, body.size() - 2);
  }
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::smatch m;
    const std::string rest = body.substr(pos);
    if (!std::regex_search(rest, m, run, std::regex_constants::match_continuous)) {
      s.fail(flag, flag.value, "an integer, a list [0,1,...] or ([0]*3+[1]*58)");
    }
    std::vector<int> items;
    for (char c : m[1].str()) {
      if (c == '0' || c == '1') items.push_back(c - '0');
    }
    const auto times = m[2].matched ? parse_launch_count(m[2].str()) : std::optional<int64_t>(1);
    if (!times)
      s.fail(flag, flag.value, "repeat counts up to " + std::to_string(kMaxLaunchInteger));
    for (int64_t t = 0; t < *times && static_cast<int64_t>(pattern.size()) <= layers; ++t) {
      pattern.insert(pattern.end(), items.begin(), items.end());
    }
    pos += m.length(0);
    if (pos < body.size() && body[pos] == '+') ++pos;
  }
  if (static_cast<int64_t>(pattern.size()) != layers) {
    s.fail(flag, flag.value, "one 0/1 entry per layer (" + std::to_string(layers) + ")");
  }
  return pattern;
}

void read_model(SettingTable& s, ImportDraft& d) {
  Json& m = d.model;
  const int64_t layers = s.required_integer("--num-layers");
  if (layers > kMaxModelLayers) {
    s.fail(*s.get("--num-layers"), std::to_string(layers),
           "at most " + std::to_string(kMaxModelLayers) + " layers");
  }
  m["num_layers"] = layers;
  m["hidden_size"] = s.required_integer("--hidden-size");
  const int64_t heads = s.required_integer("--num-attention-heads");
  m["num_attention_heads"] = heads;
  if (auto v = s.integer("--ffn-hidden-size")) m["ffn_hidden_size"] = *v;
  const bool gqa = s.has("--group-query-attention");
  if (auto v = s.integer("--num-query-groups"); v && gqa) m["num_query_groups"] = *v;
  if (auto v = s.integer("--kv-channels")) m["head_dim"] = *v;
  if (auto v = s.integer("--vocab-size")) m["vocab_size"] = *v;
  m["activation"] = s.has("--swiglu") ? "swiglu" : "gelu";
  const auto norm = s.text("--normalization").value_or("LayerNorm");
  m["normalization"] = norm == "RMSNorm" ? "rmsnorm" : "layernorm";
  const auto position = s.text("--position-embedding-type").value_or("learned_absolute");
  if (position == "rope") {
    m["position_embedding"] = "rotary";
    m["rotary_base"] = s.number("--rotary-base").value_or(10000);
    if (s.has("--use-rope-scaling")) {
      m["rope_scaling_factor"] = s.number("--rope-scaling-factor").value_or(8.0);
    }
  } else if (position == "learned_absolute") {
    m["position_embedding"] = "learned";
  } else {
    s.fail(*s.get("--position-embedding-type"), position, "rope or learned_absolute");
  }
  m["linear_bias"] = !s.has("--disable-bias-linear");
  // add_qkv_bias defaults to add_bias_linear (transformer_config.py).
  m["qkv_bias"] = s.has("--add-qkv-bias") || !s.has("--disable-bias-linear");
  m["qk_norm"] = s.has("--qk-layernorm");
  m["tied_embeddings"] = !s.has("--untie-embeddings-and-output-weights");
  if (s.has("--multi-latent-attention")) {
    m["mla"] = {{"q_lora_rank", s.integer("--q-lora-rank").value_or(0)},
                {"kv_lora_rank", s.required_integer("--kv-lora-rank")},
                {"qk_nope_head_dim", s.required_integer("--qk-head-dim")},
                {"qk_rope_head_dim", s.required_integer("--qk-pos-emb-head-dim")},
                {"v_head_dim", s.required_integer("--v-head-dim")}};
  }
  if (auto experts = s.integer("--num-experts")) {
    Json moe = {
        {"num_experts", *experts},
        {"top_k", s.integer("--moe-router-topk").value_or(2)},
        {"expert_ffn_hidden_size",
         s.integer("--moe-ffn-hidden-size")
             .value_or(
                 s.integer("--ffn-hidden-size").value_or(4 * m["hidden_size"].get<int64_t>()))}};
    if (auto shared = s.integer("--moe-shared-expert-intermediate-size")) {
      moe["num_shared_experts"] = 1;
      moe["shared_expert_ffn_hidden_size"] = *shared;
    }
    if (const LaunchSetting* freq = s.get("--moe-layer-freq")) {
      const auto placement = moe_placement(megatron_moe_pattern(s, *freq, layers));
      if (!placement) {
        s.fail(*freq, freq->value, "dense layers first, then an MoE layer every k layers");
      }
      moe["first_dense_layers"] = placement->first;
      moe["moe_layer_frequency"] = placement->second;
    }
    m["moe"] = moe;
  }
}

// "Et*3|t*2|t*2L" -> {3, 2, 2}: transformer layers per model chunk.
std::vector<int64_t> layout_chunks(SettingTable& s, const LaunchSetting& flag) {
  std::string layout = flag.value;
  layout.erase(std::remove(layout.begin(), layout.end(), ','), layout.end());
  std::vector<int64_t> chunks(1, 0);
  const std::regex part(R"(([EtL])(?:\*(\d+))?)");
  for (std::size_t i = 0; i < layout.size();) {
    if (layout[i] == '|') {
      chunks.push_back(0);
      ++i;
      continue;
    }
    std::smatch m;
    const std::string rest = layout.substr(i);
    if (!std::regex_search(rest, m, part, std::regex_constants::match_continuous)) {
      s.fail(flag, flag.value, "E, t and L with optional *N, chunks split by |");
    }
    const auto n = m[2].matched ? parse_launch_count(m[2].str()) : std::optional<int64_t>(1);
    if (!n || chunks.back() > kMaxLaunchInteger) {
      s.fail(flag, flag.value, "layer counts up to " + std::to_string(kMaxLaunchInteger));
    }
    if (m[1] == "t") chunks.back() += *n;
    if (chunks.size() > static_cast<std::size_t>(kMaxPipelineChunks)) {
      s.fail(flag, flag.value, "at most " + std::to_string(kMaxPipelineChunks) + " chunks");
    }
    i += m.length(0);
  }
  return chunks;
}

void read_plan(SettingTable& s, ImportDraft& d) {
  Json& p = d.plan;
  const int64_t tp = s.integer("--tensor-model-parallel-size").value_or(1);
  const int64_t pp = s.integer("--pipeline-model-parallel-size").value_or(1);
  const int64_t layers = d.model["num_layers"].get<int64_t>();
  if (pp > layers + kEndChunksWithoutLayers) {
    s.fail(*s.get("--pipeline-model-parallel-size"), std::to_string(pp),
           "at most --num-layers + 2 (" + std::to_string(layers + kEndChunksWithoutLayers) +
               ") stages");
  }
  p["tp"] = tp;
  p["pp"] = pp;
  p["cp"] = s.integer("--context-parallel-size").value_or(1);
  p["ep"] = s.integer("--expert-model-parallel-size").value_or(1);
  d.expert_tp = s.integer("--expert-tensor-parallel-size");
  int64_t vpp = 1;
  if (auto per = s.integer("--num-layers-per-virtual-pipeline-stage")) {
    vpp = layers / pp / *per;
  } else if (auto v = s.integer("--num-virtual-stages-per-pipeline-rank")) {
    vpp = *v;
  }
  if (const LaunchSetting* layout = s.get("--pipeline-model-parallel-layout")) {
    d.chunk_layers = layout_chunks(s, *layout);
    if (static_cast<int64_t>(d.chunk_layers.size()) % pp != 0) {
      s.fail(*layout, layout->value, "a multiple of pp = " + std::to_string(pp) + " chunks");
    }
    vpp = static_cast<int64_t>(d.chunk_layers.size()) / pp;
  } else if (auto first = s.integer("--decoder-first-pipeline-num-layers")) {
    const int64_t last = s.integer("--decoder-last-pipeline-num-layers").value_or(0);
    const int64_t middle = pp > 2 ? (layers - *first - last) / (pp - 2) : 0;
    d.chunk_layers.assign(pp, middle);
    d.chunk_layers.front() = *first;
    d.chunk_layers.back() = pp > 1 ? last : layers;
  }
  p["vpp"] = vpp;
  p["schedule"] = vpp > 1 ? "interleaved" : "1f1b";
  p["micro_batch_size"] = s.integer("--micro-batch-size").value_or(1);
  p["sequence_parallel"] = s.has("--sequence-parallel");
  const auto granularity = s.text("--recompute-granularity");
  p["recompute"] = granularity.value_or("none");
  if (const auto modules = s.text("--recompute-modules")) {
    Json list = Json::array();
    std::istringstream words(*modules);
    for (std::string module; words >> module;) list.push_back(module);
    p["recompute_modules"] = list;
  }
  if (const auto layers = s.count("--cpu-offloading-num-layers"); layers && *layers > 0) {
    p["offload_activation_layers"] = *layers;
  }
  // parplan's full recomputation recomputes every layer (uniform, one layer per group).
  const auto method = s.text("--recompute-method");
  const auto recomputed = s.integer("--recompute-num-layers");
  if (granularity == "full" &&
      ((method && *method == "block") || (recomputed && *recomputed != 1))) {
    d.notes.push_back(
        "plan.recompute: the launch recomputes part of the layers (--recompute-method " +
        method.value_or("uniform") + ", --recompute-num-layers " +
        std::to_string(recomputed.value_or(1)) +
        "); parplan models full recomputation of every layer");
  }
  if (s.has("--use-tp-pp-dp-mapping")) p["order"] = "tp-cp-ep-pp-dp";
  int zero = s.has("--use-distributed-optimizer") ? 1 : 0;
  if (s.has("--use-megatron-fsdp")) {
    zero =
        s.text("--data-parallel-sharding-strategy").value_or("optim_grads_params") == "optim_grads"
            ? 2
            : 3;
  }
  p["zero_stage"] = zero;
  if (auto instances = s.integer("--num-distributed-optimizer-instances"); instances && zero == 1) {
    d.optimizer_instances = *instances;  // zero_shard_size = dp / instances, once dp is known
  }
}

// The MoE token dispatcher (transformer_config.py moe_token_dispatcher_type, "allgather" by
// default; moe_flex_dispatcher_backend, "deepep" by default, or the deprecated
// --moe-enable-deepep) and the batch-level overlap (model_parallel_config.py
// overlap_moe_expert_parallel_comm, delay_wgrad_compute).
void read_moe_dispatch(SettingTable& s, ImportDraft& d) {
  const LaunchSetting* type = s.get("--moe-token-dispatcher-type");
  const LaunchSetting* backend = s.get("--moe-flex-dispatcher-backend");
  const bool enable_deepep = s.has("--moe-enable-deepep");
  const bool overlap = s.has("--overlap-moe-expert-parallel-comm");
  const bool delay_wgrad = s.has("--delay-wgrad-compute");
  if (!d.model.contains("moe")) return;
  std::string kind = type ? type->value : "allgather";
  if (kind == "flex") {
    kind = enable_deepep || !backend ? "deepep" : backend->value;
    if (kind != "deepep" && kind != "hybridep") {
      s.fail(*backend, kind, "deepep or hybridep (parplan models no ncclep)");
    }
  } else if (kind != "alltoall" && kind != "allgather") {
    s.fail(*type, kind, "allgather, alltoall or flex");
  }
  record_moe_dispatch(d, kind, "Megatron's default without --moe-token-dispatcher-type", overlap,
                      delay_wgrad, "--delay-wgrad-compute");
}

// One allocator setting, "key:value" with the spaces PyTorch's tokenizer drops removed.
std::pair<std::string, std::string> allocator_setting(std::string item) {
  item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
  const auto colon = item.find(':');
  if (colon == std::string::npos) return {item, ""};
  return {item.substr(0, colon), item.substr(colon + 1)};
}

// The settings of an allocator value in order, empty items dropped.
std::vector<std::pair<std::string, std::string>> allocator_settings(const std::string& value) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream items(value);
  for (std::string item; std::getline(items, item, ',');) {
    auto setting = allocator_setting(item);
    if (!setting.first.empty()) out.push_back(std::move(setting));
  }
  return out;
}

// PyTorch's allocator option (core/training_spec.h: training.expandable_segments), under its
// current name and its deprecated one. PyTorch releases differ in which they read first
// (c10/cuda/CUDAAllocatorConfig.h, CUDAAllocatorConfig::instance()); the current name is taken
// here and a disagreement is named. The value is comma-separated "key:value" settings
// (c10/core/AllocatorConfig.cpp): expandable_segments takes exactly True or False (PyTorch
// stops on anything else), the cudaMallocAsync backend ignores it, and the settings the model
// does not follow are named in a note.
void read_allocator_conf(SettingTable& s, ImportDraft& d) {
  const LaunchSetting* current = s.get("env PYTORCH_ALLOC_CONF");
  const LaunchSetting* deprecated = s.get("env PYTORCH_CUDA_ALLOC_CONF");
  if (current != nullptr && current->value.empty()) current = nullptr;  // unset or empty
  if (deprecated != nullptr && deprecated->value.empty()) deprecated = nullptr;
  const LaunchSetting* used = current != nullptr ? current : deprecated;
  if (used == nullptr) return;
  const std::string name = used == current ? "PYTORCH_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
  if (used->value.front() == '$') {
    d.notes.push_back(name + "=" + used->value +
                      ": a shell variable, not read (give its value for expandable_segments)");
    return;
  }
  const auto settings = allocator_settings(used->value);
  if (current != nullptr && deprecated != nullptr &&
      settings != allocator_settings(deprecated->value)) {
    d.notes.push_back("PYTORCH_ALLOC_CONF=" + current->value +
                      " and PYTORCH_CUDA_ALLOC_CONF=" + deprecated->value +
                      " differ; PyTorch releases differ in which they read, parplan read "
                      "PYTORCH_ALLOC_CONF");
  }
  std::optional<bool> expandable;
  bool malloc_async = false;
  std::vector<std::string> not_modelled;
  for (const auto& [key, value] : settings) {
    if (key == "expandable_segments" && (value == "True" || value == "False")) {
      expandable = value == "True";
    } else if (key == "expandable_segments") {
      d.notes.push_back(name + ": expandable_segments:" + value +
                        " is rejected by PyTorch, which takes True or False; not read");
    } else {
      malloc_async = malloc_async || (key == "backend" && value == "cudaMallocAsync");
      not_modelled.push_back(key + ":" + value);
    }
  }
  if (expandable && malloc_async) {
    d.notes.push_back(name +
                      ": backend:cudaMallocAsync ignores expandable_segments (PyTorch's "
                      "native-allocator settings); not read");
  } else if (expandable) {
    d.training["expandable_segments"] = *expandable;
  }
  if (!not_modelled.empty()) {
    d.notes.push_back(name + ": " + join_names(not_modelled) +
                      " not modelled (of PyTorch's allocator settings, parplan follows "
                      "expandable_segments)");
  }
}

}  // namespace

ImportDraft read_megatron_launch(SettingTable& s) {
  ImportDraft d;
  d.framework = "megatron-core";
  read_model(s, d);
  read_plan(s, d);
  read_moe_dispatch(s, d);
  Json& t = d.training;
  t["global_batch_size"] = s.required_integer("--global-batch-size");
  t["seq_length"] = s.required_integer("--seq-length");
  std::string precision = s.has("--bf16") ? "bf16" : s.has("--fp16") ? "fp16" : "fp32";
  if (s.has("--fp8-format")) precision = "fp8";
  s.get("--fp8-recipe");
  // Read (and so not reported unread) whatever the precision.
  const bool reuse_grad_buf = s.has("--reuse-grad-buf-for-mxfp8-param-ag");
  if (precision == "fp8") {
    d.fp8_param_gather = s.has("--fp8-param-gather");
    d.fp8_reuse_grad_buf = reuse_grad_buf;
  }
  t["precision"] = precision;
  t["method"] = s.has("--finetune") ? "sft" : "pretrain";
  read_allocator_conf(s, d);
  d.overlaps_grad_reduce = s.has("--overlap-grad-reduce");
  d.overlaps_param_gather = s.has("--overlap-param-gather");
  d.num_nodes = s.integer("torchrun --nnodes").value_or(0);
  d.gpus_per_node = s.integer("torchrun --nproc-per-node")
                        .value_or(s.integer("torchrun --nproc_per_node").value_or(0));
  // Read, with no effect on the prediction: paths, tokenizer, schedule length, optimizer,
  // overlap switches the framework's traits already assume, the environment.
  for (const char* key : {"--data-path",
                          "--tokenizer-type",
                          "--tokenizer-model",
                          "--save",
                          "--load",
                          "--ckpt-format",
                          "--train-iters",
                          "--lr",
                          "--max-position-embeddings",
                          "--make-vocab-size-divisible-by",
                          "--attention-dropout",
                          "--hidden-dropout",
                          "--overlap-grad-reduce",
                          "--overlap-param-gather",
                          "--tp-comm-overlap",
                          "--moe-grouped-gemm",
                          "--no-gradient-accumulation-fusion",
                          "--data-parallel-sharding-strategy",
                          "env CUDA_DEVICE_MAX_CONNECTIONS",
                          "torchrun --node-rank",
                          "torchrun --master-addr",
                          "torchrun --master-port",
                          "torchrun --node_rank",
                          "torchrun --master_addr",
                          "torchrun --master_port"}) {
    s.get(key);
  }
  return d;
}

}  // namespace parplan::tools
