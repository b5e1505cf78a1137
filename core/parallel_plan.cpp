#include "core/parallel_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/check.h"

namespace parplan {

namespace {
constexpr int64_t kMaxDegree = 1'000'000;

std::string str(int64_t v) { return std::to_string(v); }

int64_t moe_expert_ffn(const ModelSpec& model) {
  return model.moe ? model.moe->expert_ffn_hidden_size : 0;
}
// plan.recompute_modules: a non-empty list of Megatron's module names.
unsigned parse_recompute_modules(JsonReader& in) {
  const Json* list = in.find("recompute_modules");
  if (list == nullptr || list->is_null()) return 0;
  std::string names;
  for (const auto& module : kRecomputeModuleNames) {
    names += std::string(names.empty() ? "" : ", ") + "\"" + module.name + "\"";
  }
  if (!list->is_array() || list->empty()) {
    in.fail("recompute_modules", describe_json_value(*list), "a non-empty list of " + names);
  }
  unsigned bits = 0;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& item = (*list)[i];
    const auto* match = std::find_if(
        std::begin(kRecomputeModuleNames), std::end(kRecomputeModuleNames),
        [&](const RecomputeModuleName& m) { return item.is_string() && item == m.name; });
    if (match == std::end(kRecomputeModuleNames)) {
      in.fail("recompute_modules[" + std::to_string(i) + "]", describe_json_value(item),
              "one of " + names);
    }
    bits |= match->bit;
  }
  return bits;
}

// Megatron-Core's activation offloading (TransformerConfig.__post_init__): fewer layers than
// the model has, no pipeline parallelism, no recomputation; the transfers need the node's
// GPU-host link figure.
std::optional<PlanViolation> check_activation_offload(const ModelSpec& model,
                                                      const ClusterSpec& cluster,
                                                      const ParallelPlan& p) {
  const int64_t n = p.offload_activation_layers;
  if (n == 0) return std::nullopt;
  const std::string key = "plan.offload_activation_layers";
  if (n >= model.num_layers) {
    return PlanViolation{"offload-layers", key, str(n),
                         "fewer than model.num_layers (" + str(model.num_layers) + ")"};
  }
  if (p.pp > 1) {
    return PlanViolation{"offload-with-pp", key, str(n), "0 when pp > 1 (Megatron-Core)"};
  }
  if (p.recompute != Recompute::None) {
    return PlanViolation{
        "offload-with-recompute", key, str(n),
        "0 with recompute \"" + std::string(to_string(p.recompute)) + "\" (Megatron-Core)"};
  }
  if (cluster.node.host_link_gbps <= 0) {
    return PlanViolation{"offload-host-link", key, str(n),
                         "0 on node " + cluster.node.name + ", which gives no host_link_gbps"};
  }
  return std::nullopt;
}

// Megatron-Core's batch-level all-to-all overlap (TransformerConfig.__post_init__, "if
// self.overlap_moe_expert_parallel_comm"): expert parallelism, virtual pipeline stages when
// pp > 1 (the combined 1F1B pairs chunks of the interleaved schedule), no full recomputation
// and no recomputation of the MoE block; a 16-bit model ("overlap_moe_expert_parallel_comm is
// only supported with bf16 or fp16 model").
std::optional<PlanViolation> check_moe_keys(const ModelSpec& model, const TrainingSpec& training,
                                            const ParallelPlan& p) {
  if (!model.moe && p.moe_dispatcher != MoeDispatcher::Auto) {
    return PlanViolation{"moe-key-without-moe", "plan.moe_dispatcher",
                         std::string("\"") + to_string(p.moe_dispatcher) + "\"",
                         "\"auto\" (unset) for a dense model"};
  }
  if (!p.moe_a2a_overlap) return std::nullopt;
  const std::string key = "plan.moe_a2a_overlap";
  if (p.ep <= 1) {
    return PlanViolation{"a2a-overlap-needs-ep", key, "true", "false when ep = 1 (Megatron-Core)"};
  }
  if (p.pp > 1 && p.vpp <= 1) {
    return PlanViolation{"a2a-overlap-needs-vpp", key, "true",
                         "false when pp > 1 and vpp = 1 (Megatron-Core pairs the chunks of the "
                         "interleaved schedule)"};
  }
  if (p.recompute == Recompute::Full || (p.recompute_modules & recompute_module::kMoe)) {
    return PlanViolation{"a2a-overlap-with-recompute", key, "true",
                         "false with full recomputation or \"moe\" in recompute_modules "
                         "(Megatron-Core)"};
  }
  if (training.precision == Precision::Fp32) {
    return PlanViolation{"a2a-overlap-fp32", key, "true",
                         "false for fp32 training (Megatron-Core runs it with bf16 or fp16 "
                         "models)"};
  }
  return std::nullopt;
}
}  // namespace

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::Selective:
      return "selective";
    case Recompute::Full:
      return "full";
    case Recompute::None:
      break;
  }
  return "none";
}

const char* to_string(ScheduleKind schedule) {
  switch (schedule) {
    case ScheduleKind::Gpipe:
      return "gpipe";
    case ScheduleKind::Interleaved:
      return "interleaved";
    case ScheduleKind::ZeroBubble:
      return "zero-bubble";
    case ScheduleKind::DualPipe:
      return "dualpipe";
    case ScheduleKind::OneFOneB:
      break;
  }
  return "1f1b";
}

const char* to_string(MoeDispatcher dispatcher) {
  switch (dispatcher) {
    case MoeDispatcher::AllToAll:
      return "alltoall";
    case MoeDispatcher::DeepEP:
      return "deepep";
    case MoeDispatcher::HybridEP:
      return "hybridep";
    case MoeDispatcher::Auto:
      break;
  }
  return "auto";
}

bool ParallelPlan::was_given(std::string_view key) const {
  return std::find(given_keys.begin(), given_keys.end(), key) != given_keys.end();
}

ParallelPlan parse_parallel_plan(const Json& object, const std::string& file,
                                 const std::string& path, int64_t num_gpus, bool lenient_dp) {
  JsonReader in(object, file, path);
  ParallelPlan p;
  if (object.is_object()) {
    for (const auto& [key, value] : object.items()) p.given_keys.push_back(key);
  }
  p.tp = in.int_or("tp", 1, 1, kMaxDegree);
  p.pp = in.int_or("pp", 1, 1, kMaxDegree);
  p.cp = in.int_or("cp", 1, 1, kMaxDegree);
  p.ep = in.int_or("ep", 1, 1, kMaxDegree);
  p.vpp = in.int_or("vpp", 1, 1, 1024);
  p.micro_batch_size = in.int_or("micro_batch_size", 1, 1, 1'000'000);
  p.sequence_parallel = in.bool_or("sequence_parallel", false);
  const std::string recompute = in.choice_or("recompute", "none", {"none", "selective", "full"});
  p.recompute = recompute == "full"        ? Recompute::Full
                : recompute == "selective" ? Recompute::Selective
                                           : Recompute::None;
  p.recompute_modules = parse_recompute_modules(in);
  p.zero_stage = static_cast<int>(in.int_or("zero_stage", 0, 0, 3));
  const std::string schedule =
      in.choice_or("schedule", p.vpp > 1 ? "interleaved" : "1f1b",
                   {"1f1b", "interleaved", "gpipe", "zero-bubble", "zb-h1", "dualpipe"});
  p.schedule = schedule == "gpipe"                                ? ScheduleKind::Gpipe
               : schedule == "interleaved"                        ? ScheduleKind::Interleaved
               : schedule == "zero-bubble" || schedule == "zb-h1" ? ScheduleKind::ZeroBubble
               : schedule == "dualpipe"                           ? ScheduleKind::DualPipe
                                                                  : ScheduleKind::OneFOneB;
  p.order = in.string_or("order", p.order);
  if (const Json* split = in.find("layers_per_stage"); split != nullptr && !split->is_null()) {
    if (!split->is_array() || split->empty()) {
      in.fail("layers_per_stage", describe_json_value(*split), "a list of layer counts");
    }
    for (std::size_t i = 0; i < split->size(); ++i) {
      p.layers_per_stage.push_back(
          json_to_int((*split)[i], file,
                      in.path_of("layers_per_stage") + "[" + std::to_string(i) + "]", 0, 100'000));
    }
  }
  p.zero_shard_size = in.int_or("zero_shard_size", 0, 0, kMaxDegree);
  p.etp = in.int_or("etp", 0, 0, kMaxDegree);
  p.offload_activation_layers = in.int_or("offload_activation_layers", 0, 0, 100'000);
  // "flex" alone is Megatron-Core's flex dispatcher with its default backend, DeepEP.
  const std::string dispatcher =
      in.choice_or("moe_dispatcher", "auto", {"auto", "alltoall", "flex", "deepep", "hybridep"});
  p.moe_dispatcher = dispatcher == "alltoall"                         ? MoeDispatcher::AllToAll
                     : dispatcher == "flex" || dispatcher == "deepep" ? MoeDispatcher::DeepEP
                     : dispatcher == "hybridep"                       ? MoeDispatcher::HybridEP
                                                                      : MoeDispatcher::Auto;
  p.moe_a2a_overlap = in.bool_or("moe_a2a_overlap", false);

  const int64_t model_parallel = p.model_parallel_gpus();
  if (const auto dp = in.optional_int("dp", 1, kMaxDegree)) {
    p.dp = *dp;
  } else if (model_parallel <= num_gpus && num_gpus % model_parallel == 0) {
    p.dp = num_gpus / model_parallel;
  } else if (lenient_dp) {
    p.dp = 1;
  } else {
    throw InputError(file, join_key_path(path, "tp"), "tp*pp*cp = " + str(model_parallel),
                     "a product that divides the cluster's " + str(num_gpus) + " GPUs");
  }
  in.finish();
  return p;
}

std::optional<PlanViolation> check_plan(const ModelSpec& model, const ClusterSpec& cluster,
                                        const TrainingSpec& training, const ParallelPlan& p) {
  auto violation = [](std::string reason, std::string key, std::string found, std::string allowed) {
    return PlanViolation{std::move(reason), std::move(key), std::move(found), std::move(allowed)};
  };
  if (p.num_gpus() != cluster.num_gpus) {
    const int64_t product = p.num_gpus();
    return violation(
        "gpu-count", "plan.dp",
        "tp*pp*dp*cp = " + str(p.tp) + "*" + str(p.pp) + "*" + str(p.dp) + "*" + str(p.cp) + " = " +
            (product == std::numeric_limits<int64_t>::max() ? "more than 2^63" : str(product)),
        "a product equal to the cluster's " + str(cluster.num_gpus) + " GPUs");
  }
  if (model.num_attention_heads % p.tp != 0) {
    return violation(
        "heads-by-tp", "plan.tp", str(p.tp),
        "a divisor of model.num_attention_heads (" + str(model.num_attention_heads) + ")");
  }
  if (model.num_query_groups % p.tp != 0 && p.tp % model.num_query_groups != 0) {
    return violation(
        "query-groups-by-tp", "plan.tp", str(p.tp),
        "a divisor or a multiple of model.num_query_groups (" + str(model.num_query_groups) + ")");
  }
  if (model.ffn_hidden_size % p.tp != 0) {
    return violation("ffn-by-tp", "plan.tp", str(p.tp),
                     "a divisor of model.ffn_hidden_size (" + str(model.ffn_hidden_size) + ")");
  }
  const int64_t batch_unit = p.dp * p.micro_batch_size;
  if (training.global_batch_size % batch_unit != 0) {
    return violation("batch-by-dp-mbs", "training.global_batch_size",
                     str(training.global_batch_size),
                     "a multiple of dp*micro_batch_size = " + str(p.dp) + "*" +
                         str(p.micro_batch_size) + " = " + str(batch_unit));
  }
  if (p.cp > 1 && training.seq_length % (2 * p.cp) != 0) {
    return violation("seq-by-cp", "plan.cp", str(p.cp),
                     "a size with seq_length (" + str(training.seq_length) +
                         ") divisible by 2*cp (causal load balancing)");
  }
  if (p.sequence_parallel && p.tp > 1 && (training.seq_length / p.cp) % p.tp != 0) {
    return violation("seq-by-tp", "plan.sequence_parallel", "true",
                     "false, or seq_length/cp divisible by tp (" + str(p.tp) + ")");
  }
  if (p.ep > 1) {
    if (!model.moe) {
      return violation("ep-without-moe", "plan.ep", str(p.ep), "1 for a dense model");
    }
    if (model.moe->num_experts % p.ep != 0) {
      return violation("experts-by-ep", "plan.ep", str(p.ep),
                       "a divisor of model.moe.num_experts (" + str(model.moe->num_experts) + ")");
    }
    if (p.etp == 0 && (p.dp * p.cp) % p.ep != 0 && (p.dp * p.cp * p.tp) % p.ep != 0) {
      return violation("ep-placement", "plan.ep", str(p.ep),
                       "a divisor of dp*cp (" + str(p.dp * p.cp) + ") or of tp*dp*cp (" +
                           str(p.dp * p.cp * p.tp) + ")");
    }
  }
  if (p.etp > 0 && !model.moe) {
    return violation("etp-without-moe", "plan.etp", str(p.etp), "0 (unset) for a dense model");
  }
  if (p.etp > 0) {
    if (moe_expert_ffn(model) % p.etp != 0) {
      return violation(
          "expert-ffn-by-etp", "plan.etp", str(p.etp),
          "a divisor of model.moe.expert_ffn_hidden_size (" + str(moe_expert_ffn(model)) + ")");
    }
    if ((p.dp * p.cp * p.tp) % (p.ep * p.etp) != 0) {
      return violation("ep-placement", "plan.etp", str(p.etp),
                       "a size with ep*etp dividing tp*dp*cp (" + str(p.dp * p.cp * p.tp) + ")");
    }
  }
  if (p.vpp > 1 && p.pp == 1) {
    return violation("vpp-needs-pp", "plan.vpp", str(p.vpp), "1 when pp = 1");
  }
  if (p.vpp > 1 && p.schedule != ScheduleKind::Interleaved) {
    return violation("schedule-vpp", "plan.schedule", to_string(p.schedule),
                     "\"interleaved\" when vpp > 1");
  }
  if (p.vpp == 1 && p.schedule == ScheduleKind::Interleaved && p.pp > 1) {
    return violation("schedule-vpp", "plan.vpp", "1", "vpp > 1 with the interleaved schedule");
  }
  if (p.vpp > 1) {
    // Megatron-Core's interleaved schedule runs micro-batches in groups of pp.
    const int64_t m = training.global_batch_size / batch_unit;
    if (m % p.pp != 0) {
      return violation("microbatches-by-pp", "plan.vpp", str(p.vpp),
                       "1, or a number of micro-batches (" + str(m) + ") divisible by pp (" +
                           str(p.pp) + ") for the interleaved schedule");
    }
  }
  const int64_t chunks = p.pp * p.vpp;
  if (chunks > kMaxPipelineChunks) {
    return violation("pipeline-size", p.vpp > 1 ? "plan.vpp" : "plan.pp",
                     "pp*vpp = " + str(chunks) + " model chunks",
                     "at most " + str(kMaxPipelineChunks) + " model chunks");
  }
  if (!p.layers_per_stage.empty()) {
    if (static_cast<int64_t>(p.layers_per_stage.size()) != chunks) {
      return violation("layer-split", "plan.layers_per_stage",
                       str(static_cast<int64_t>(p.layers_per_stage.size())) + " entries",
                       "pp*vpp = " + str(chunks) + " entries");
    }
    const int64_t sum =
        std::accumulate(p.layers_per_stage.begin(), p.layers_per_stage.end(), int64_t{0});
    if (sum != model.num_layers) {
      return violation("layer-split", "plan.layers_per_stage", "a sum of " + str(sum),
                       "a sum equal to model.num_layers (" + str(model.num_layers) + ")");
    }
  } else if (chunks > model.num_layers + kEndChunksWithoutLayers) {
    // Every chunk holds a layer, except that the first may hold only the embedding and the
    // last only the output layer and loss (layers_per_chunk).
    return violation("layers-by-stages", "plan.pp", "pp*vpp = " + str(chunks),
                     "at most model.num_layers + 2 (" +
                         str(model.num_layers + kEndChunksWithoutLayers) +
                         ") model chunks: one layer each, the first chunk may hold only the "
                         "embedding and the last only the output layer");
  }
  if (p.recompute_modules != 0 && p.recompute != Recompute::Selective) {
    return violation("recompute-modules", "plan.recompute_modules", "a list of modules",
                     "no list unless recompute is \"selective\" (Megatron-Core "
                     "--recompute-granularity selective)");
  }
  if (auto offload = check_activation_offload(model, cluster, p)) return offload;
  if (auto moe = check_moe_keys(model, training, p)) return moe;
  const int64_t shard = p.effective_zero_shard();
  if (p.zero_shard_size > 0 && (p.dp % shard != 0)) {
    return violation("zero-shard", "plan.zero_shard_size", str(p.zero_shard_size),
                     "a divisor of dp (" + str(p.dp) + ")");
  }
  if (p.order != "tp-cp-ep-dp-pp" && p.order != "tp-cp-dp-pp" && p.order != "tp-dp-pp" &&
      p.order != "tp-pp-dp" && p.order != "tp-cp-pp-dp" && p.order != "tp-cp-ep-pp-dp") {
    return violation("order", "plan.order", "\"" + p.order + "\"",
                     "\"tp-cp-ep-dp-pp\" (default), \"tp-cp-ep-pp-dp\", \"tp-cp-dp-pp\", "
                     "\"tp-cp-pp-dp\", \"tp-dp-pp\", \"tp-pp-dp\"");
  }
  return std::nullopt;
}

std::vector<int64_t> layers_per_chunk(const ModelSpec& model, const ParallelPlan& plan) {
  if (!plan.layers_per_stage.empty()) return plan.layers_per_stage;
  const int64_t chunks = plan.pp * plan.vpp;
  const int64_t base = model.num_layers / chunks;
  int64_t extra = model.num_layers % chunks;
  std::vector<int64_t> out(chunks, base);
  // Hand the remainder to the chunks farthest from both ends first (middle outwards): the
  // first stage carries the embedding and the last one the output layer and loss. Chunks d and
  // chunks - 1 - d lie d chunks from an end; of the two, the lower index comes first. (No sort
  // and no allocation: the planner calls this for every plan.)
  for (int64_t d = (chunks - 1) / 2; d >= 0 && extra > 0; --d) {
    ++out[d];
    --extra;
    if (extra > 0 && chunks - 1 - d != d) {
      ++out[chunks - 1 - d];
      --extra;
    }
  }
  return out;
}

// pp below 1 counts as one stage (stage_layer_text writes nothing for it).
std::vector<int64_t> stage_layer_counts(const std::vector<int64_t>& chunk_layers, int64_t pp) {
  std::vector<int64_t> stages(static_cast<std::size_t>(std::max<int64_t>(pp, 1)), 0);
  for (std::size_t i = 0; i < chunk_layers.size(); ++i) {
    stages[i % stages.size()] += chunk_layers[i];  // chunk c of stage s: c * pp + s
  }
  return stages;
}

std::string stage_layer_text(const std::vector<int64_t>& chunk_layers, int64_t pp) {
  if (chunk_layers.empty() || pp < 1) return "";
  std::string out;
  for (int64_t n : stage_layer_counts(chunk_layers, pp)) {
    out += (out.empty() ? "" : ",") + std::to_string(n);
  }
  return out;
}

std::string layer_split_description(const ParallelPlan& plan) {
  return stage_layer_text(plan.layers_per_stage, plan.pp);
}

std::string recompute_description(const ParallelPlan& p) {
  std::string out = to_string(p.recompute);
  if (p.recompute_modules == 0) return out;
  std::string modules;
  for (const auto& module : kRecomputeModuleNames) {
    if (p.recompute_modules & module.bit)
      modules += (modules.empty() ? "" : ",") + std::string(module.name);
  }
  return out + "(" + modules + ")";
}

Json parallel_plan_to_json(const ParallelPlan& p) {
  Json out = {{"tp", p.tp},
              {"pp", p.pp},
              {"dp", p.dp},
              {"cp", p.cp},
              {"ep", p.ep},
              {"vpp", p.vpp},
              {"micro_batch_size", p.micro_batch_size},
              {"sequence_parallel", p.sequence_parallel},
              {"recompute", to_string(p.recompute)},
              {"zero_stage", p.zero_stage},
              {"schedule", to_string(p.schedule)}};
  if (p.order != "tp-cp-ep-dp-pp") out["order"] = p.order;
  if (!p.layers_per_stage.empty()) out["layers_per_stage"] = p.layers_per_stage;
  if (p.zero_shard_size > 0) out["zero_shard_size"] = p.zero_shard_size;
  if (p.etp > 0) out["etp"] = p.etp;
  if (p.recompute_modules != 0) {
    Json modules = Json::array();
    for (const auto& module : kRecomputeModuleNames) {
      if (p.recompute_modules & module.bit) modules.push_back(module.name);
    }
    out["recompute_modules"] = modules;
  }
  if (p.offload_activation_layers > 0) {
    out["offload_activation_layers"] = p.offload_activation_layers;
  }
  if (p.moe_dispatcher != MoeDispatcher::Auto) out["moe_dispatcher"] = to_string(p.moe_dispatcher);
  if (p.moe_a2a_overlap) out["moe_a2a_overlap"] = true;
  return out;
}

}  // namespace parplan
