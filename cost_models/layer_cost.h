// Time of one micro-batch through one transformer layer (and through the embedding and the
// output layer) on one GPU: every op of the forward and backward pass with its FLOPs and
// bytes, GEMMs timed by core/gemm_efficiency.h, attention as flash attention (no s^2 traffic)
// or as the unfused score/softmax/dropout chain (attention_cost.h), memory-bound kernels at
// achievable HBM bandwidth, and the tensor-, context- and expert-parallel collectives with
// the part that the framework hides under compute removed. Recomputation adds its forward
// work.
// Tested in tests/cost_models/step_model_test.cpp and beyond_3d_test.cpp (FLOP counts against
// Narayanan et al. 2021 eq. 3, tp=1 => no tp time, monotonicity).
#pragma once

#include <string>
#include <vector>

#include "core/job.h"
#include "cost_models/framework_traits.h"
#include "cost_models/group_placement.h"

namespace parplan::cost {

// Seconds by kind for one micro-batch of one layer (or of the embedding / output layer).
struct PassTime {
  double compute = 0;  // GEMMs, attention, memory-bound kernels
  double tp_comm = 0;  // exposed tensor-parallel collectives
  double cp_comm = 0;  // exposed context-parallel ring exchange
  double ep_comm = 0;  // exposed expert-parallel all-to-all
  double total() const { return compute + tp_comm + cp_comm + ep_comm; }
  PassTime& operator+=(const PassTime& other);
};
PassTime operator*(const PassTime& time, double factor);

// A MoE layer's all-to-alls under the combined 1F1B, as the layer's times count them: hidden
// beside the paired micro-batch, seconds by the pass that issues them, and what the hidden part
// slows the computation beside it. A chunk with no partner exposes them instead (its share:
// unpaired_chunk_fraction in cost_models/moe_dispatch.h, applied per chunk by the step model).
struct PairedA2a {
  double hidden_forward = 0;
  double hidden_backward = 0;
  double compute_cost_forward = 0;
  double compute_cost_backward = 0;
};

struct LayerTime {
  PassTime forward;
  PassTime backward;
  PassTime recompute;  // extra forward work redone before the backward pass
  // The weight-gradient part of backward.compute, seconds: the GEMMs (and the embedding's
  // scatter-add) that compute parameter gradients, which zero-bubble schedules defer (W).
  double backward_weight = 0;
  double model_flops = 0;     // forward + backward FLOPs without recomputation (one GPU)
  double executed_flops = 0;  // including recomputation and the unmasked attention blocks
  PairedA2a paired_a2a;       // zero unless the plan overlaps the all-to-alls (moe_a2a_overlap)
};

// One op of a layer for one micro-batch (explanations: `parplan simulate --explain`).
struct OpRecord {
  std::string name;
  std::string kind;  // gemm, attention, memory
  double flops = 0;  // forward
  double bytes = 0;  // forward memory traffic of memory-bound kernels
  double forward_s = 0;
  double backward_s = 0;
};

// Everything the per-layer model needs, prepared once per plan.
struct CostContext {
  const ModelSpec* model = nullptr;
  const ParallelPlan* plan = nullptr;
  const TrainingSpec* training = nullptr;
  const NodeSpec* node = nullptr;
  FrameworkTraits traits;
  GroupPlacement tp_group;
  GroupPlacement cp_group;
  GroupPlacement ep_group;
  GroupPlacement etp_group;  // expert tensor parallelism (expert_rows.h)
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;  // resolved (cost_models/moe_dispatch.h)
  double tokens = 0;  // T = micro_batch_size * seq_length / cp on this GPU
  // Calibrated throughput of the MoE expert block and its dispatch (core/calibration.h).
  double moe_throughput_fraction = 1.0;
  // Calibrated host overhead per micro-batch and pipeline stage, seconds (core/calibration.h;
  // the step model adds it, cost_models/step_model.cpp).
  double micro_batch_overhead_s = 0.0;
  std::vector<OpRecord>* ops_out = nullptr;  // when set, every op is appended here

  static CostContext make(const Job& job, const NodeSpec& node);
};

LayerTime dense_layer_time(const CostContext& ctx);
LayerTime moe_layer_time(const CostContext& ctx);
LayerTime embedding_time(const CostContext& ctx);     // first stage: lookup (and grads)
LayerTime output_layer_time(const CostContext& ctx);  // last stage: final norm, logits, loss

// One transformer layer of the job (its MoE layer when `moe`, else its dense layer) for one
// micro-batch on one GPU, with every op it costs: `simulate --explain` and the tests that check
// an op's FLOPs, bytes or time.
struct ExplainedLayer {
  LayerTime time;
  std::vector<OpRecord> ops;
  double tokens = 0;  // CostContext::tokens
};
ExplainedLayer explain_layer(const Job& job, bool moe);

// Fraction of the GPU's processors a collective overlapped with compute takes from it.
double comm_sm_fraction(const GpuSpec& gpu);

// Bytes per second of a memory-bound kernel: a measured kernel of that kind (GpuSpec::
// kernel_gbps, from a profile of the machine), else the framework's share of the achievable
// HBM bandwidth (FrameworkTraits::memory_kernel_bandwidth_fraction). The measured figures
// count only for jobs of the precision they were taken in (GpuSpec::kernel_figures_apply).
double memory_kernel_bytes_per_s(const GpuSpec& gpu, const FrameworkTraits& traits,
                                 const char* kind = nullptr,
                                 Precision job_precision = Precision::Bf16);

// Load-imbalance allowance for routed experts: the busiest expert rank processes this many
// times the mean token count (stated assumption; auxiliary-loss-balanced routers keep the
// max/mean ratio near 1.1, e.g. Switch Transformer capacity factor 1.0-1.25).
inline constexpr double kExpertImbalance = 1.1;

}  // namespace parplan::cost
