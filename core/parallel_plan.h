// ParallelPlan: how a job is split over GPUs (docs/job_file.md#plan), and the rules that make a
// plan valid for a model, a cluster and a training setup. check_plan() returns the first
// violated rule as a value (the planner counts them by reason); the job loader turns it into
// an InputError. Tested in tests/core/parallel_plan_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/checked_int.h"
#include "core/cluster_spec.h"
#include "core/json_input.h"
#include "core/model_spec.h"
#include "core/training_spec.h"

namespace parplan {

enum class Recompute { None, Selective, Full };
enum class ScheduleKind { Gpipe, OneFOneB, Interleaved, ZeroBubble, DualPipe };
// How a MoE layer moves its routed tokens to the expert ranks and back (Megatron-Core
// --moe-token-dispatcher-type and --moe-flex-dispatcher-backend; megatron/core/transformer/moe/
// README.md, "Token dispatcher"). Auto: the framework's recipe choice for the plan
// (cost_models/moe_dispatch.h).
enum class MoeDispatcher {
  Auto,
  AllToAll,  // NCCL all-to-all: every routed copy of a token travels to its expert's rank
  DeepEP,    // flex + DeepEP: a token crosses the network once per destination node
  HybridEP,  // flex + HybridEP: the same deduplication, NVIDIA's TMA/IBGDA kernels
};

// Megatron-Core's --recompute-modules (with recompute "selective"): the submodules whose
// outputs are dropped after the forward pass and recomputed before the backward, as bits.
namespace recompute_module {
inline constexpr unsigned kCoreAttn = 1u << 0;       // attention core (softmax, scores)
inline constexpr unsigned kMoeAct = 1u << 1;         // routed experts' activation function
inline constexpr unsigned kLayernorm = 1u << 2;      // input and pre-MLP norms
inline constexpr unsigned kMlaUpProj = 1u << 3;      // multi-latent attention up-projections
inline constexpr unsigned kMlp = 1u << 4;            // the dense MLP
inline constexpr unsigned kMoe = 1u << 5;            // the whole MoE block
inline constexpr unsigned kSharedExperts = 1u << 6;  // the MoE shared experts
}  // namespace recompute_module

// Megatron's names for the module bits, in bit order.
struct RecomputeModuleName {
  const char* name;
  unsigned bit;
};
inline constexpr RecomputeModuleName kRecomputeModuleNames[] = {
    {"core_attn", recompute_module::kCoreAttn},
    {"moe_act", recompute_module::kMoeAct},
    {"layernorm", recompute_module::kLayernorm},
    {"mla_up_proj", recompute_module::kMlaUpProj},
    {"mlp", recompute_module::kMlp},
    {"moe", recompute_module::kMoe},
    {"shared_experts", recompute_module::kSharedExperts}};

const char* to_string(Recompute recompute);
const char* to_string(ScheduleKind schedule);
const char* to_string(MoeDispatcher dispatcher);
// DeepEP and HybridEP: Megatron-Core's flex dispatcher (--moe-token-dispatcher-type flex).
constexpr bool is_flex_dispatcher(MoeDispatcher dispatcher) {
  return dispatcher == MoeDispatcher::DeepEP || dispatcher == MoeDispatcher::HybridEP;
}

struct ParallelPlan {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  int64_t vpp = 1;
  int64_t micro_batch_size = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  // With recompute "selective": the Megatron modules recomputed (recompute_module bits);
  // 0 = Megatron's default, the attention core.
  unsigned recompute_modules = 0;
  int zero_stage = 0;
  ScheduleKind schedule = ScheduleKind::OneFOneB;
  // Extensions (docs/job_file.md#plan-extensions; their defaults change nothing):
  std::string order = "tp-cp-ep-dp-pp";   // rank order, fastest-varying first (Megatron)
  std::vector<int64_t> layers_per_stage;  // explicit split over pp*vpp model chunks
  int64_t zero_shard_size = 0;            // hybrid sharding group; 0 = all of dp
  int64_t etp = 0;                        // expert tensor-parallel size; 0 = the rule below
  // Layers whose saved activations go to host memory during the forward pass and come back
  // for their backward (Megatron-Core cpu_offloading_num_layers): the first layers of the
  // model. 0 = none.
  int64_t offload_activation_layers = 0;
  // MoE token dispatch (see MoeDispatcher) and Megatron-Core's batch-level overlap of the
  // expert-parallel all-to-alls with the computation of a neighbouring micro-batch
  // (--overlap-moe-expert-parallel-comm --delay-wgrad-compute, "combined 1F1B").
  MoeDispatcher moe_dispatcher = MoeDispatcher::Auto;
  bool moe_a2a_overlap = false;
  // Keys the job file set explicitly; the others may take the framework's defaults.
  std::vector<std::string> given_keys;
  bool was_given(std::string_view key) const;
  // Keys the framework filled because the job left them out (for reports; see
  // apply_framework_plan_defaults in core/frameworks/plan_defaults.h).
  std::vector<std::string> framework_default_keys;

  // Saturate at INT64_MAX instead of overflowing (a plan may hold any accepted degrees).
  int64_t model_parallel_gpus() const { return saturating_product({tp, pp, cp}); }
  int64_t num_gpus() const { return saturating_product({tp, pp, cp, dp}); }
  int64_t num_micro_batches(int64_t global_batch_size) const {
    return global_batch_size / (dp * micro_batch_size);
  }
  // Expert tensor parallel size: the plan's etp when given (Megatron-Core
  // --expert-tensor-parallel-size, torchtitan expert_tensor_parallel_degree), else tp when ep
  // fits inside dp*cp, else 1 (ep then spans the tensor-parallel ranks too).
  int64_t expert_tp() const {
    if (etp > 0) return etp;
    return (dp * cp) % ep == 0 ? tp : 1;
  }
  int64_t effective_zero_shard() const { return zero_shard_size > 0 ? zero_shard_size : dp; }
};

// Most model chunks (pp * vpp) a plan may have: the pipeline simulation's cost grows with
// their square (512 chunks take seconds in a Debug sanitizer build), and published runs use
// at most ~128. The planner counts larger plans as "pipeline-size".
inline constexpr int64_t kMaxPipelineChunks = 512;
// Model chunks that may hold no transformer layer: the first (embedding only) and the last
// (output layer and loss only); layers_per_chunk.
inline constexpr int64_t kEndChunksWithoutLayers = 2;

// Why a plan is not valid; `reason` is a short stable tag the planner counts.
struct PlanViolation {
  std::string reason;    // e.g. "gpu-count", "heads-by-tp", "batch-by-dp-mbs"
  std::string key_path;  // e.g. "plan.tp"
  std::string found;
  std::string allowed;
};

// Reads a plan object; dp is derived from the cluster when absent (and checked when given).
// With `lenient_dp` a tp*pp*cp that does not divide the cluster leaves dp at 1 instead of
// failing: for commands that read the plan but do not use it (plan searches its own).
ParallelPlan parse_parallel_plan(const Json& object, const std::string& file,
                                 const std::string& path, int64_t num_gpus,
                                 bool lenient_dp = false);

std::optional<PlanViolation> check_plan(const ModelSpec& model, const ClusterSpec& cluster,
                                        const TrainingSpec& training, const ParallelPlan& plan);

// The layer count of each of the pp*vpp model chunks, in pipeline order (chunk c of stage
// s is index c*pp + s). Uneven splits give the extra layers to the middle chunks, as Megatron
// does when the embedding and loss make the first and last stages heavier. With one or two
// chunks more than layers, the last (and then also the first) chunk holds no layer: only the
// output layer and loss (the embedding), as Megatron-Core's account_for_embedding_in_pipeline_
// split and account_for_loss_in_pipeline_split split num_layers + 2 (Megatron-Bridge's Llama
// 3.1 405B recipes: 126 layers on pp 16 x vpp 8) and torchtitan's *_stage_less_layers do.
std::vector<int64_t> layers_per_chunk(const ModelSpec& model, const ParallelPlan& plan);

Json parallel_plan_to_json(const ParallelPlan& plan);

// "none", "full", "selective", or with Megatron modules "selective(core_attn,mlp)".
std::string recompute_description(const ParallelPlan& plan);

// Layers of each of the pp pipeline stages, given the layers of each model chunk (chunk c of
// stage s at index c * pp + s, as ParallelPlan::layers_per_stage): the chunks summed per stage.
std::vector<int64_t> stage_layer_counts(const std::vector<int64_t>& chunk_layers, int64_t pp);

// Stage layer counts as text: "20,20,20,21,20,20,20,19"; empty when `chunk_layers` is.
std::string stage_layer_text(const std::vector<int64_t>& chunk_layers, int64_t pp);

// An explicit layer split (layers_per_stage) as the layers of each pipeline stage, its model
// chunks summed: "20,20,20,21,20,20,20,19"; empty for the default split.
std::string layer_split_description(const ParallelPlan& plan);

}  // namespace parplan
