#include "cost_models/step_model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/collective.h"
#include "core/units.h"
#include "cost_models/collective_model.h"
#include "cost_models/data_parallel_update.h"
#include "cost_models/layer_cost.h"
#include "cost_models/memory_model.h"
#include "cost_models/moe_dispatch.h"
#include "cost_models/parameter_layout.h"

namespace parplan::cost {

namespace {

// One micro-batch of one model chunk on one stage, seconds by kind.
struct ChunkTime {
  PassTime forward;
  PassTime backward;           // includes recomputation
  PassTime recompute;          // the recomputation part alone
  double backward_weight = 0;  // the weight-gradient part of backward.compute
  double fsdp_forward = 0;
  double fsdp_backward = 0;
  // The calibrated host overhead of one micro-batch in this chunk (core/calibration.h),
  // counted in forward.compute and backward.compute, named apart in the breakdown.
  double micro_batch_overhead = 0;
  double forward_total() const { return forward.total() + fsdp_forward; }
  double backward_total() const { return backward.total() + fsdp_backward; }
};
using ChunkTimes = std::vector<std::vector<ChunkTime>>;  // [stage][chunk]

// ZeRO-3 / FSDP collectives of one layer, per micro-batch and pass.
struct FsdpLayer {
  double gather_s = 0;  // all-gather of the layer's 16-bit weights
  double reduce_s = 0;  // reduce-scatter of its gradients
};

struct FsdpCosts {
  FsdpLayer dense;  // a layer without routed experts
  FsdpLayer moe;    // a MoE layer: its dense weights and its routed experts
  // Share of a layer's weights gathered once more for the backward after a full
  // recomputation (recompute_regather_share).
  double recompute_regather_share = 1.0;
  const FsdpLayer& layer(bool is_moe) const { return is_moe ? moe : dense; }
};

// Share of a layer's weights that ZeRO-3 gathers again for the backward after the checkpointed
// recomputation, whose forward hooks fetch the weights and release those whose next use lies
// more than `max_reuse_params` parameters away (FrameworkTraits::zero3_max_reuse_distance_params;
// 0: all). A module's next use is its own backward, after the rest of the recomputed forward
// and the backward of the modules after it: twice the weights after it in the layer. The
// layer's modules in forward order: query-key-value, output projection, the MLP's input
// projection(s) and its output projection.
double recompute_regather_share(const ModelSpec& m, double max_reuse_params) {
  if (max_reuse_params <= 0) return 1.0;
  const double h = static_cast<double>(m.hidden_size);
  const double v_dim = static_cast<double>(m.mla ? m.mla->v_head_dim : m.head_dim);
  const double output_projection = static_cast<double>(m.num_attention_heads) * v_dim * h;
  const double attention = static_cast<double>(m.attention_params());
  const double mlp =
      static_cast<double>(m.layer_params(0) - m.attention_params() - m.norm_params_per_layer());
  const double inputs_share = static_cast<double>(m.mlp_matrices() - 1) / m.mlp_matrices();
  const double modules[] = {attention - output_projection, output_projection, mlp * inputs_share,
                            mlp * (1 - inputs_share)};
  double after = attention + mlp;
  double regathered = 0;
  for (const double weights : modules) {
    after -= weights;
    if (2 * after > max_reuse_params) regathered += weights;
  }
  return regathered / (attention + mlp);
}

// Whether ZeRO-3 / FSDP gathers each layer's weights per micro-batch. With pipelining some
// frameworks gather a stage once per step instead (FrameworkTraits::fsdp_unsharded_with_pp);
// that traffic then goes with the data-parallel reduction (data_parallel_update).
bool gathers_per_layer(const ParallelPlan& plan, const FrameworkTraits& traits) {
  return plan.zero_stage >= 3 && !(traits.fsdp_unsharded_with_pp && plan.pp > 1);
}

// ZeRO-3 / FSDP collectives of one layer over the shard groups: each layer's weights are
// gathered before its forward and again before its backward, and its gradients
// reduce-scattered after (zero when the weights are not gathered per layer). A MoE layer's
// routed experts are sharded over the expert-data-parallel group (parameter_layout.cpp,
// expert_shard_group) and gathered and reduced there, beside its dense weights over the
// data-parallel group (Megatron-FSDP and torchtitan's FSDP2 shard experts over expert-dp
// alike). `stage` gives the dense weights per layer (averaged over its layers) and `moe_stage`
// a stage holding MoE layers, the experts per MoE layer (the same on every stage).
FsdpCosts fsdp_layer_costs(const CostContext& ctx, const StageParameters& stage,
                           const StageParameters& moe_stage, bool per_layer_fsdp) {
  FsdpCosts fsdp;
  if (!per_layer_fsdp || stage.num_layers == 0) return fsdp;
  const ParallelPlan& plan = *ctx.plan;
  const NodeSpec& node = *ctx.node;
  const GroupPlacement dense_group =
      plan.zero_shard_size > 0 ? place_strided(plan.zero_shard_size, plan.tp, node, plan.num_gpus())
                               : data_parallel_group(plan, node, ctx.traits);
  const GroupPlacement expert_group = place_strided(
      moe_stage.expert_shard_group, plan.ep * plan.expert_tp(), node, plan.num_gpus());
  const double layers = static_cast<double>(stage.num_layers);
  const double layer_dense = (stage.dense_params - stage.embedding_params) / layers;
  const double layer_expert =
      moe_stage.num_moe_layers > 0
          ? moe_stage.expert_params / static_cast<double>(moe_stage.num_moe_layers)
          : 0.0;
  const double bpv = activation_bytes(ctx.training->precision);
  // A framework that moves parameters in buckets issues one collective per bucket, each
  // paying the collective's latency over the whole shard group.
  auto bucketed = [&](Collective op, const GroupPlacement& group, double params,
                      double bytes_per_param, double bucket) {
    if (params <= 0 || group.size <= 1) return 0.0;
    const double collectives = bucket > 0 ? std::max(1.0, std::ceil(params / bucket)) : 1.0;
    return collectives *
           collective_cost(node, op, group, params * bytes_per_param / collectives).time_s;
  };
  const double gather_bucket = ctx.traits.fsdp_gather_bucket_params;
  const double reduce_bucket = ctx.traits.fsdp_reduce_bucket_params;
  const double grad_bytes = ctx.traits.grad_reduce_bytes;
  const bool lora = ctx.training->method == TrainingMethod::Lora;
  fsdp.dense.gather_s =
      bucketed(Collective::AllGather, dense_group, layer_dense, bpv, gather_bucket);
  // LoRA trains the adapters only: their gradients are what is reduced.
  fsdp.dense.reduce_s =
      bucketed(Collective::ReduceScatter, dense_group,
               lora ? stage.adapter_params / layers : layer_dense, grad_bytes, reduce_bucket);
  fsdp.moe = fsdp.dense;
  fsdp.moe.gather_s +=
      bucketed(Collective::AllGather, expert_group, layer_expert, bpv, gather_bucket);
  if (!lora) {
    fsdp.moe.reduce_s +=
        bucketed(Collective::ReduceScatter, expert_group, layer_expert, grad_bytes, reduce_bucket);
  }
  fsdp.recompute_regather_share =
      recompute_regather_share(*ctx.model, ctx.traits.zero3_max_reuse_distance_params);
  return fsdp;
}

// One layer's ZeRO-3 time per micro-batch under a blocking fetch
// (FrameworkTraits::zero3_fetch_blocks): each gather waits for the device, the gradient
// reduce-scatters in flight included, so nothing hides under compute. Full recomputation
// gathers the layer's far-reused weights once more (recompute_regather_share).
void add_blocking_fsdp_layer(ChunkTime& c, const FsdpLayer& fsdp, double regather_share,
                             const CostContext& ctx) {
  c.fsdp_forward += fsdp.gather_s;
  const double regather = ctx.plan->recompute == Recompute::Full ? regather_share : 0.0;
  c.fsdp_backward += (1 + regather) * fsdp.gather_s + fsdp.reduce_s;
}

// One layer's exposed ZeRO-3 / FSDP time per micro-batch: prefetching overlaps each gather and
// reduce-scatter with the neighbouring layer's compute (torchtitan FSDP2, PyTorch FSDP);
// what the compute cannot hide is exposed, and the hidden part holds SMs.
void add_fsdp_layer(ChunkTime& c, const LayerTime& layer, const FsdpCosts& costs, bool is_moe,
                    const CostContext& ctx) {
  const FsdpLayer& fsdp = costs.layer(is_moe);
  if (ctx.traits.zero3_fetch_blocks) {
    add_blocking_fsdp_layer(c, fsdp, costs.recompute_regather_share, ctx);
    return;
  }
  const double f = layer.forward.total();
  const double b = layer.backward.total() + layer.recompute.total();
  const double sm_share = comm_sm_fraction(ctx.node->gpu);
  c.fsdp_forward += std::max(fsdp.gather_s - f, 0.0) + sm_share * std::min(fsdp.gather_s, f);
  // With the post-gradient prefetch the next layer's gather waits for this layer's
  // gradients (exposed); only the reduce-scatter runs under the backward compute.
  const bool post = ctx.traits.fsdp_backward_prefetch_post;
  const double exposed_gather = post ? fsdp.gather_s : 0.0;
  const double overlapped = fsdp.reduce_s + (post ? 0.0 : fsdp.gather_s);
  c.fsdp_backward +=
      exposed_gather + std::max(overlapped - b, 0.0) + sm_share * std::min(overlapped, b);
}

// A prefetching fetch cannot prefetch a chunk's first gather of the pass, nor hide its last
// reduce-scatter: both are exposed once per chunk and micro-batch. A blocking fetch counted
// them with every layer already (add_blocking_fsdp_layer).
void add_fsdp_chunk_ends(ChunkTime& c, const FsdpLayer& fsdp, const CostContext& ctx) {
  if (ctx.traits.zero3_fetch_blocks) return;
  c.fsdp_forward += fsdp.gather_s;
  c.fsdp_backward += fsdp.reduce_s;
}

// Seconds per micro-batch to add a chunk's gradients into the fp32 buffer after its backward
// (FrameworkTraits::grad_accumulation_bytes_per_micro_batch).
double grad_accumulation_s(const CostContext& ctx, const StageParameters& sp) {
  const bool lora = ctx.training->method == TrainingMethod::Lora;
  const double trainable = lora ? sp.adapter_params : sp.dense_params + sp.expert_params;
  const double chunk_params = trainable / static_cast<double>(ctx.plan->vpp);
  return chunk_params * ctx.traits.grad_accumulation_bytes_per_micro_batch /
         memory_kernel_bytes_per_s(ctx.node->gpu, ctx.traits);
}

// Seconds to move one layer's saved activations between the GPU and host memory in one
// direction (ParallelPlan::offload_activation_layers), dense and MoE layers.
struct OffloadTransfer {
  double dense_s = 0;
  double moe_s = 0;
};

OffloadTransfer offload_transfer(const Job& job, const FrameworkTraits& traits) {
  if (job.plan.offload_activation_layers == 0) return {};
  const ActivationOptions options = activation_options(job, traits);
  const double bytes_per_s = gbps_to_bytes_per_s(job.cluster.node.host_link_gbps);
  OffloadTransfer out;
  out.dense_s = dense_layer_activation_bytes(job.model, options).stored / bytes_per_s;
  if (job.model.moe) {
    out.moe_s =
        moe_layer_activation_bytes(job.model, options, job.plan.ep, job.plan.expert_tp()).stored /
        bytes_per_s;
  }
  return out;
}

// An offloaded layer's copy to the host runs on a copy engine while the next layer computes
// its forward, and the copy back while the layer after it (in backward order) computes its
// backward (Transformer Engine's double-buffered offload handler); the stream waits only for
// what the neighbour's compute does not cover.
void add_offload_layer(ChunkTime& c, const LayerTime& layer, double transfer_s) {
  c.forward.compute += std::max(transfer_s - layer.forward.total(), 0.0);
  c.backward.compute +=
      std::max(transfer_s - (layer.backward.total() + layer.recompute.total()), 0.0);
}

// The combined 1F1B's fill and drain chunks have no partner: on average the `unpaired` share
// of a chunk's micro-batches exposes what the layer's all-to-alls hid beside a partner, and
// their computation runs without the overlap's slowdown.
void add_unpaired_a2a(ChunkTime& c, const PairedA2a& paired, double unpaired) {
  c.forward.ep_comm += unpaired * paired.hidden_forward;
  c.backward.ep_comm += unpaired * paired.hidden_backward;
  c.forward.compute -= unpaired * paired.compute_cost_forward;
  c.backward.compute -= unpaired * paired.compute_cost_backward;
}

// A calibrated host overhead per micro-batch and stage (core/calibration.h), spread over the
// stage's vpp chunks: a third in the forward pass, two thirds in the backward, which launches
// about twice the kernels. Nothing is added without a calibration.
void add_micro_batch_overhead(ChunkTime& c, const CostContext& ctx) {
  const double overhead_s = ctx.micro_batch_overhead_s / static_cast<double>(ctx.plan->vpp);
  if (overhead_s <= 0) return;
  c.forward.compute += overhead_s / 3;
  c.backward.compute += 2 * overhead_s / 3;
  c.micro_batch_overhead += overhead_s;
}

// Per stage and chunk: one micro-batch's forward and backward times, the embedding on the
// first chunk and the output layer on the last.
ChunkTimes chunk_times(const CostContext& ctx, const LayerTimes& layers,
                       const std::vector<StageParameters>& stages, const FsdpCosts& fsdp,
                       bool per_layer_fsdp, const OffloadTransfer& offload) {
  const ModelSpec& model = *ctx.model;
  const ParallelPlan& plan = *ctx.plan;
  const auto chunk_layers = layers_per_chunk(model, plan);
  ChunkTimes chunks(plan.pp, std::vector<ChunkTime>(plan.vpp));
  const PipelineShape shape = pipeline_shape(plan, ctx.training->global_batch_size);
  int64_t first_layer = 0;
  for (int64_t index = 0; index < plan.pp * plan.vpp; ++index) {
    const int64_t stage = index % plan.pp;
    ChunkTime& c = chunks[stage][index / plan.pp];
    const double unpaired = plan.moe_a2a_overlap ? unpaired_chunk_fraction(shape, stage) : 0.0;
    for (int64_t l = first_layer; l < first_layer + chunk_layers[index]; ++l) {
      const LayerTime& layer = model.is_moe_layer(l) ? layers.moe : layers.dense;
      c.forward += layer.forward;
      c.backward += layer.backward;
      add_unpaired_a2a(c, layer.paired_a2a, unpaired);
      c.backward += layer.recompute;
      c.recompute += layer.recompute;
      c.backward_weight += layer.backward_weight;
      if (per_layer_fsdp) add_fsdp_layer(c, layer, fsdp, model.is_moe_layer(l), ctx);
      if (l < plan.offload_activation_layers) {
        add_offload_layer(c, layer, model.is_moe_layer(l) ? offload.moe_s : offload.dense_s);
      }
    }
    if (ctx.traits.grad_accumulation_bytes_per_micro_batch > 0) {
      const double accumulation_s = grad_accumulation_s(ctx, stages[stage]);
      c.backward.compute += accumulation_s;
      c.backward_weight += accumulation_s;  // follows the weight-gradient GEMMs
    }
    if (per_layer_fsdp && chunk_layers[index] > 0) {
      // The chunk's first gather (its first layer's) and last reduce-scatter (the backward
      // ends at the same layer).
      add_fsdp_chunk_ends(c, fsdp.layer(model.is_moe_layer(first_layer)), ctx);
    }
    if (index == 0) {
      c.forward += layers.embedding.forward;
      c.backward += layers.embedding.backward;
      c.backward_weight += layers.embedding.backward_weight;
    }
    if (index == plan.pp * plan.vpp - 1) {
      c.forward += layers.head.forward;
      c.backward += layers.head.backward;
      c.backward_weight += layers.head.backward_weight;
    }
    add_micro_batch_overhead(c, ctx);
    first_layer += chunk_layers[index];
  }
  return chunks;
}

// Pipeline point-to-point time per micro-batch and boundary: the boundary activation (1/tp of
// it with the scatter-gather optimisation, Narayanan et al. 2021 §4.1).
double pipeline_p2p_s(const CostContext& ctx) {
  const ParallelPlan& plan = *ctx.plan;
  const NodeSpec& node = *ctx.node;
  if (plan.pp <= 1) return 0.0;
  const GroupPlacement pp_group = place_group(plan, node, {"pp"});
  double bytes = activation_bytes(ctx.training->precision) * ctx.tokens *
                 static_cast<double>(ctx.model->hidden_size);
  if ((ctx.traits.pp_scatter_gather || plan.sequence_parallel) && plan.tp > 1) {
    bytes /= static_cast<double>(plan.tp);
  }
  // Adjacent stages sit on one node unless the pipeline crosses a node boundary between
  // them: with ranks_per_node stages per node, one boundary in ranks_per_node does. The
  // simulation uses the mean transfer time (every micro-batch crosses every boundary).
  GroupPlacement local = place_strided(2, 1, node.gpus_per_node);
  GroupPlacement remote = place_strided(2, node.gpus_per_node, node.gpus_per_node);
  remote.nic_share = pp_group.nic_share;
  const double crossing =
      pp_group.crosses_nodes() ? 1.0 / static_cast<double>(pp_group.ranks_per_node) : 0.0;
  const double t_local = collective_cost(node, Collective::SendRecv, local, bytes).time_s;
  const double t_remote = collective_cost(node, Collective::SendRecv, remote, bytes).time_s;
  return crossing * t_remote + (1.0 - crossing) * t_local;
}

// The pipeline simulation's input: the schedule, every stage's chunk times, the transfer.
PipelineInput pipeline_input(const CostContext& ctx, const ChunkTimes& chunks, double p2p_s,
                             bool record_events) {
  PipelineInput pipe;
  pipe.shape = pipeline_shape(*ctx.plan, ctx.training->global_batch_size);
  pipe.p2p_s = p2p_s;
  pipe.p2p_blocks_sender =
      ctx.traits.pipeline_p2p_blocking ||
      (ctx.traits.pipeline_p2p_blocking_without_interleaving && ctx.plan->vpp <= 1);
  pipe.record_events = record_events;
  for (const auto& stage_chunks : chunks) {
    StageTimes st;
    for (const ChunkTime& c : stage_chunks) {
      st.forward.push_back(c.forward_total());
      st.backward.push_back(c.backward_total());
      // Zero-bubble schedules defer the weight gradients (W) and run the input gradients (B)
      // first (Qi et al. 2024, arXiv 2401.10241; sail-sg/zero-bubble-pipeline-parallelism
      // defers the linear layers' wgrad_gemm_accum calls through its WeightGradStore).
      st.backward_weight.push_back(c.backward_weight);
    }
    pipe.stages.push_back(std::move(st));
  }
  return pipe;
}

// Every chunk's times by kind, for traces.
std::vector<std::vector<StepEstimate::ChunkParts>> chunk_parts(const ChunkTimes& chunks) {
  std::vector<std::vector<StepEstimate::ChunkParts>> parts;
  for (const auto& stage_chunks : chunks) {
    auto& stage_parts = parts.emplace_back();
    for (const ChunkTime& c : stage_chunks) {
      stage_parts.push_back(
          {c.forward, c.backward, c.recompute.total(), c.fsdp_forward, c.fsdp_backward});
    }
  }
  return parts;
}

// The bottleneck stage: the one with the most work (busy time plus its exposed reduction and
// optimizer); the first of equals.
int64_t most_work_stage(const PipelineResult& pipeline, const DataParallelUpdate& update) {
  int64_t stage = 0;
  double most_work = -1;
  for (std::size_t s = 0; s < pipeline.busy_s.size(); ++s) {
    const double work = pipeline.busy_s[s] + update.exposed_s[s] + update.optimizer_s[s];
    if (work > most_work) {
      most_work = work;
      stage = static_cast<int64_t>(s);
    }
  }
  return stage;
}

// The step by kind on the critical stage (`chunks` are its chunks): its m micro-batches of
// work, its exposed reduction and optimizer. Everything else of the step is waiting on the
// pipeline: warm-up and cool-down bubbles, imbalance between stages, p2p transfers.
StepBreakdown critical_stage_breakdown(const std::vector<ChunkTime>& chunks,
                                       int64_t num_micro_batches, double step_time_s,
                                       double dp_exposed_s, double optimizer_s) {
  StepBreakdown br;
  const double mb = static_cast<double>(num_micro_batches);
  double busy = 0;
  for (const ChunkTime& ch : chunks) {
    PassTime without_recompute_backward = ch.backward;
    without_recompute_backward.compute -= ch.recompute.compute;
    without_recompute_backward.tp_comm -= ch.recompute.tp_comm;
    without_recompute_backward.cp_comm -= ch.recompute.cp_comm;
    without_recompute_backward.ep_comm -= ch.recompute.ep_comm;
    br.compute +=
        mb * (ch.forward.compute + without_recompute_backward.compute - ch.micro_batch_overhead);
    br.micro_batch_overhead += mb * ch.micro_batch_overhead;
    br.recompute += mb * ch.recompute.total();
    br.tp_comm += mb * (ch.forward.tp_comm + without_recompute_backward.tp_comm);
    br.cp_comm += mb * (ch.forward.cp_comm + without_recompute_backward.cp_comm);
    br.ep_comm += mb * (ch.forward.ep_comm + without_recompute_backward.ep_comm);
    br.fsdp_comm += mb * (ch.fsdp_forward + ch.fsdp_backward);
    busy += mb * (ch.forward_total() + ch.backward_total());
  }
  br.dp_comm = dp_exposed_s;
  br.optimizer = optimizer_s;
  br.pp_bubble = std::max(0.0, step_time_s - busy - br.dp_comm - br.optimizer);
  return br;
}

// Throughput and model FLOPs utilisation of a step of `out.step_time_s`.
void add_throughput(const Job& job, const LayerTimes& layers, StepEstimate& out) {
  const ModelSpec& model = job.model;
  const ParallelPlan& plan = job.plan;
  const double gpus = static_cast<double>(job.cluster.num_gpus);
  out.tokens_per_s = job.training.tokens_per_step() / out.step_time_s;
  out.tokens_per_s_per_gpu = out.tokens_per_s / gpus;
  // Model FLOPs per step: every layer's forward+backward FLOPs on every micro-batch, summed
  // over the model-parallel GPUs of one replica, times the replicas (dp).
  double replica_flops = 0;
  double replica_hw_flops = 0;
  for (int64_t l = 0; l < model.num_layers; ++l) {
    const LayerTime& layer = model.is_moe_layer(l) ? layers.moe : layers.dense;
    replica_flops += layer.model_flops;
    replica_hw_flops += layer.executed_flops;
  }
  replica_flops += layers.head.model_flops;
  replica_hw_flops += layers.head.executed_flops;
  const double mb = static_cast<double>(out.num_micro_batches);
  const double per_micro_batch_gpus = static_cast<double>(plan.tp * plan.cp);
  out.model_flops = replica_flops * per_micro_batch_gpus * mb * static_cast<double>(plan.dp);
  out.hardware_flops = replica_hw_flops * per_micro_batch_gpus * mb * static_cast<double>(plan.dp);
  out.model_tflops_per_gpu = out.model_flops / out.step_time_s / gpus / kTera;
  // MFU against the peak the job's GEMMs run at (the 16-bit one for fp8 on an A100).
  out.mfu =
      out.model_tflops_per_gpu / job.cluster.node.gpu.computed_peak_tflops(job.training.precision);
}

// Results are finite or a clear error: an infinite or NaN time means a figure of the node is
// zero where the job needs it (the job loader rejects the known cases) or an input beyond what
// the model was checked for. Never print or rank such a plan.
void check_finite_estimate(const Job& job, const StepEstimate& out) {
  // The parts are non-negative: their sum is finite exactly when each one is (cheap enough for
  // every plan the planner times).
  if (std::isfinite(out.step_time_s + out.tokens_per_s + out.model_flops + out.mfu +
                    out.breakdown.total())) {
    return;
  }
  std::vector<std::pair<std::string, double>> values = out.breakdown.named();
  values.emplace_back("step_time_s", out.step_time_s);
  values.emplace_back("tokens_per_s", out.tokens_per_s);
  values.emplace_back("model_flops", out.model_flops);
  values.emplace_back("mfu", out.mfu);
  for (const auto& [name, value] : values) {
    PARPLAN_CHECK(std::isfinite(value), job.file, ": the step-time model gave ", value, " for ",
                  name, " (model ", job.model.name, " on ", job.cluster.num_gpus, " x ",
                  job.cluster.node.gpu.name, ", plan tp=", job.plan.tp, " pp=", job.plan.pp,
                  " dp=", job.plan.dp, "); check the node's figures (a zero bandwidth or peak)");
  }
  PARPLAN_CHECK(false, job.file, ": the step-time model's results overflow a double");
}

}  // namespace

double StepBreakdown::total() const {
  return compute + recompute + tp_comm + cp_comm + ep_comm + pp_bubble + dp_comm + fsdp_comm +
         optimizer + step_overhead + micro_batch_overhead;
}

std::vector<std::pair<std::string, double>> StepBreakdown::named() const {
  std::vector<std::pair<std::string, double>> parts = {
      {"compute", compute}, {"recompute", recompute}, {"tp_comm", tp_comm},
      {"cp_comm", cp_comm}, {"ep_comm", ep_comm},     {"pipeline_bubble", pp_bubble},
      {"dp_comm", dp_comm}, {"fsdp_comm", fsdp_comm}, {"optimizer", optimizer}};
  if (step_overhead != 0) parts.emplace_back("step_overhead", step_overhead);
  if (micro_batch_overhead != 0) parts.emplace_back("micro_batch_overhead", micro_batch_overhead);
  return parts;
}

LayerTimes compute_layer_times(const Job& job) {
  const CostContext ctx = CostContext::make(job, job.cluster.node);
  LayerTimes t;
  t.dense = dense_layer_time(ctx);
  t.moe = job.model.moe ? moe_layer_time(ctx) : LayerTime{};
  t.embedding = embedding_time(ctx);
  t.head = output_layer_time(ctx);
  return t;
}

LayerTimesKey layer_times_key(const ParallelPlan& p) {
  return {p.tp, p.cp, p.ep, p.expert_tp(), p.micro_batch_size, p.sequence_parallel && p.tp > 1,
          // The recompute mode and, above it, Megatron's recompute module bits.
          static_cast<int>(p.recompute) + 4 * static_cast<int>(p.recompute_modules),
          p.schedule == ScheduleKind::DualPipe ? 1
          : p.moe_a2a_overlap                  ? 2
                                               : 0,
          static_cast<int>(p.moe_dispatcher)};
}

double compute_lower_bound_s(const Job& job, const LayerTimes& layers) {
  const ModelSpec& model = job.model;
  const ParallelPlan& plan = job.plan;
  const int64_t m = plan.num_micro_batches(job.training.global_batch_size);
  const auto chunk_layers = layers_per_chunk(model, plan);
  std::vector<double> stage_work(plan.pp, 0.0);
  int64_t first_layer = 0;
  for (int64_t index = 0; index < plan.pp * plan.vpp; ++index) {
    double work = 0;
    for (int64_t l = first_layer; l < first_layer + chunk_layers[index]; ++l) {
      const LayerTime& layer = model.is_moe_layer(l) ? layers.moe : layers.dense;
      work += layer.forward.total() + layer.backward.total() + layer.recompute.total();
    }
    if (index == plan.pp * plan.vpp - 1) {
      work += layers.head.forward.total() + layers.head.backward.total();
    }
    stage_work[index % plan.pp] += work;
    first_layer += chunk_layers[index];
  }
  return static_cast<double>(m) * *std::max_element(stage_work.begin(), stage_work.end());
}

StepEstimate estimate_step(const Job& job, const StepOptions& options) {
  return estimate_step(job, compute_layer_times(job), options);
}

StepEstimate estimate_step(const Job& job, const LayerTimes& layers, const StepOptions& options) {
  const ParallelPlan& plan = job.plan;
  const CostContext ctx = CostContext::make(job, job.cluster.node);
  StepEstimate out;
  out.memory = estimate_memory(job, ctx.traits);
  out.num_micro_batches = plan.num_micro_batches(job.training.global_batch_size);

  const auto stages = stage_parameters(job, ctx.traits);
  const bool per_layer_fsdp = gathers_per_layer(plan, ctx.traits);
  // The per-layer collectives of a stage that holds layers: the first stage, unless it holds
  // only the embedding (a plan with more stages than layers).
  const auto layered = std::find_if(stages.begin(), stages.end(),
                                    [](const StageParameters& s) { return s.num_layers > 0; });
  const auto with_moe = std::find_if(stages.begin(), stages.end(),
                                     [](const StageParameters& s) { return s.num_moe_layers > 0; });
  const StageParameters& layered_stage = layered == stages.end() ? stages.front() : *layered;
  const FsdpCosts fsdp = fsdp_layer_costs(
      ctx, layered_stage, with_moe == stages.end() ? layered_stage : *with_moe, per_layer_fsdp);
  const ChunkTimes chunks =
      chunk_times(ctx, layers, stages, fsdp, per_layer_fsdp, offload_transfer(job, ctx.traits));

  out.p2p_s = pipeline_p2p_s(ctx);
  out.pipeline = simulate_pipeline_fast(
      pipeline_input(ctx, chunks, out.p2p_s, options.record_pipeline_events));
  if (options.record_pipeline_events) out.chunk_parts = chunk_parts(chunks);

  const DataParallelUpdate update =
      data_parallel_update(job, ctx.traits, stages, out.pipeline, per_layer_fsdp);
  out.hidden_dp_comm = update.hidden_s;
  out.dp_exposed_s = update.exposed_s;
  out.optimizer_s = update.optimizer_s;
  // The step ends when the slowest stage's optimizer step does.
  for (int64_t s = 0; s < plan.pp; ++s) {
    out.step_time_s = std::max(
        out.step_time_s, out.pipeline.finish_s[s] + update.exposed_s[s] + update.optimizer_s[s]);
  }

  out.critical_stage = most_work_stage(out.pipeline, update);
  const int64_t cs = out.critical_stage;
  out.breakdown = critical_stage_breakdown(chunks[cs], out.num_micro_batches, out.step_time_s,
                                           update.exposed_s[cs], update.optimizer_s[cs]);
  // A calibrated per-step overhead (core/calibration.h) ends every step; + 0.0 is exact.
  out.breakdown.step_overhead = job.calibration.step_overhead_s;
  out.step_time_s += job.calibration.step_overhead_s;
  add_throughput(job, layers, out);
  check_finite_estimate(job, out);
  return out;
}

}  // namespace parplan::cost
