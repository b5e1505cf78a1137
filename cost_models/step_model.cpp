#include "cost_models/step_model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/collective.h"
#include "cost_models/collective_model.h"
#include "cost_models/layer_cost.h"
#include "cost_models/parameter_layout.h"

namespace parplan::cost {

namespace {

// Megatron-Core DDP bucket: at least 40M parameters (distributed.DistributedDataParallelConfig
// bucket_size = max(40000000, 1000000 * dp)); the last bucket of a chunk cannot overlap.
constexpr double kGradBucketParams = 40e6;

struct ChunkTime {
  PassTime forward;
  PassTime backward;   // includes recomputation
  PassTime recompute;  // the recomputation part alone
  double fsdp_forward = 0;
  double fsdp_backward = 0;
  double forward_total() const { return forward.total() + fsdp_forward; }
  double backward_total() const { return backward.total() + fsdp_backward; }
};

struct FsdpCosts {
  double gather_s = 0;  // all-gather of one layer's 16-bit weights
  double reduce_s = 0;  // reduce-scatter of one layer's gradients
};

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
         optimizer;
}

std::vector<std::pair<std::string, double>> StepBreakdown::named() const {
  return {{"compute", compute}, {"recompute", recompute}, {"tp_comm", tp_comm},
          {"cp_comm", cp_comm}, {"ep_comm", ep_comm},     {"pipeline_bubble", pp_bubble},
          {"dp_comm", dp_comm}, {"fsdp_comm", fsdp_comm}, {"optimizer", optimizer}};
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
  return {p.tp,
          p.cp,
          p.ep,
          p.expert_tp(),
          p.micro_batch_size,
          p.sequence_parallel && p.tp > 1,
          static_cast<int>(p.recompute)};
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
  const ModelSpec& model = job.model;
  const ParallelPlan& plan = job.plan;
  const TrainingSpec& training = job.training;
  const NodeSpec& node = job.cluster.node;
  const CostContext ctx = CostContext::make(job, node);
  const FrameworkTraits& traits = ctx.traits;
  const double bpv = activation_bytes(training.precision);
  const bool lora = training.method == TrainingMethod::Lora;

  StepEstimate out;
  out.memory = estimate_memory(job, traits);
  out.num_micro_batches = plan.num_micro_batches(training.global_batch_size);
  const int64_t m = out.num_micro_batches;

  const LayerTime& dense = layers.dense;
  const LayerTime& moe = layers.moe;
  const LayerTime& embedding = layers.embedding;
  const LayerTime& head = layers.head;

  // ZeRO-3 / FSDP: each layer's weights are gathered before its forward and again before its
  // backward, and its gradients reduce-scattered after; prefetching overlaps them with the
  // neighbouring layer's compute (torchtitan FSDP2, DeepSpeed ZeRO-3 prefetch).
  const auto stages = stage_parameters(job);
  const GroupPlacement shard_group =
      plan.zero_shard_size > 0
          ? place_strided(plan.zero_shard_size, plan.tp, node, plan.num_gpus())
          : place_group(plan, node,
                        traits.cp_shards_optimizer ? std::vector<std::string>{"dp", "cp"}
                                                   : std::vector<std::string>{"dp"});
  FsdpCosts fsdp;
  // With pipelining some frameworks gather a stage once per step instead of per layer and
  // micro-batch (FrameworkTraits::fsdp_unsharded_with_pp); that traffic then goes with the
  // data-parallel reduction below.
  const bool per_layer_fsdp =
      plan.zero_stage >= 3 && !(traits.fsdp_unsharded_with_pp && plan.pp > 1);
  if (per_layer_fsdp && stages.front().num_layers > 0) {
    const double layer_dense =
        (stages.front().dense_params - stages.front().embedding_params) /
        std::max<double>(1.0, static_cast<double>(stages.front().num_layers));
    fsdp.gather_s =
        collective_cost(node, Collective::AllGather, shard_group, layer_dense * bpv).time_s;
    const double layer_trainable =
        lora ? stages.front().adapter_params /
                   std::max<double>(1.0, static_cast<double>(stages.front().num_layers))
             : layer_dense;
    fsdp.reduce_s = collective_cost(node, Collective::ReduceScatter, shard_group,
                                    layer_trainable * traits.grad_reduce_bytes)
                        .time_s;
  }

  // Per stage and chunk: one micro-batch's forward and backward times.
  const auto chunk_layers = layers_per_chunk(model, plan);
  std::vector<std::vector<ChunkTime>> chunks(plan.pp, std::vector<ChunkTime>(plan.vpp));
  int64_t first_layer = 0;
  for (int64_t index = 0; index < plan.pp * plan.vpp; ++index) {
    const int64_t stage = index % plan.pp;
    const int64_t chunk = index / plan.pp;
    ChunkTime& c = chunks[stage][chunk];
    for (int64_t l = first_layer; l < first_layer + chunk_layers[index]; ++l) {
      const LayerTime& layer = model.is_moe_layer(l) ? moe : dense;
      c.forward += layer.forward;
      c.backward += layer.backward;
      c.backward += layer.recompute;
      c.recompute += layer.recompute;
      if (per_layer_fsdp) {
        const double f = layer.forward.total();
        const double b = layer.backward.total() + layer.recompute.total();
        const double sm_share = comm_sm_fraction(node.gpu);
        c.fsdp_forward += std::max(fsdp.gather_s - f, 0.0) + sm_share * std::min(fsdp.gather_s, f);
        // With the post-gradient prefetch the next layer's gather waits for this layer's
        // gradients (exposed); only the reduce-scatter runs under the backward compute.
        const bool post = traits.fsdp_backward_prefetch_post;
        const double exposed_gather = post ? fsdp.gather_s : 0.0;
        const double overlapped = fsdp.reduce_s + (post ? 0.0 : fsdp.gather_s);
        c.fsdp_backward +=
            exposed_gather + std::max(overlapped - b, 0.0) + sm_share * std::min(overlapped, b);
      }
    }
    if (traits.grad_accumulation_bytes_per_micro_batch > 0) {
      // The chunk's gradients added into the fp32 buffer after each micro-batch's backward.
      const StageParameters& sp = stages[stage];
      const double trainable = lora ? sp.adapter_params : sp.dense_params + sp.expert_params;
      const double chunk_params = trainable / static_cast<double>(plan.vpp);
      c.backward.compute += chunk_params * traits.grad_accumulation_bytes_per_micro_batch /
                            memory_kernel_bytes_per_s(node.gpu, traits);
    }
    if (per_layer_fsdp && chunk_layers[index] > 0) {
      c.fsdp_forward += fsdp.gather_s;   // the first gather of the pass cannot be prefetched
      c.fsdp_backward += fsdp.reduce_s;  // nor the last reduce-scatter
    }
    if (index == 0) {
      c.forward += embedding.forward;
      c.backward += embedding.backward;
    }
    if (index == plan.pp * plan.vpp - 1) {
      c.forward += head.forward;
      c.backward += head.backward;
    }
    first_layer += chunk_layers[index];
  }

  // Pipeline point-to-point: the boundary activation (1/tp of it with the scatter-gather
  // optimisation, Narayanan et al. 2021 §4.1).
  if (plan.pp > 1) {
    const GroupPlacement pp_group = place_group(plan, node, {"pp"});
    double bytes = bpv * ctx.tokens * static_cast<double>(model.hidden_size);
    if ((traits.pp_scatter_gather || plan.sequence_parallel) && plan.tp > 1) {
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
    out.p2p_s = crossing * t_remote + (1.0 - crossing) * t_local;
  }

  PipelineInput pipe;
  pipe.shape = {plan.schedule, plan.pp, plan.vpp, m};
  pipe.p2p_s = out.p2p_s;
  pipe.p2p_blocks_sender = traits.pipeline_p2p_blocking;
  pipe.record_events = options.record_pipeline_events;
  for (int64_t s = 0; s < plan.pp; ++s) {
    StageTimes st;
    for (int64_t c = 0; c < plan.vpp; ++c) {
      st.forward.push_back(chunks[s][c].forward_total());
      st.backward.push_back(chunks[s][c].backward_total());
      // Zero-bubble defers the weight-gradient GEMMs: about half the backward compute.
      st.backward_weight.push_back(0.5 * chunks[s][c].backward.compute);
    }
    pipe.stages.push_back(std::move(st));
  }
  out.pipeline = simulate_pipeline_fast(pipe);
  if (options.record_pipeline_events) {
    out.chunk_parts.assign(plan.pp, std::vector<StepEstimate::ChunkParts>(plan.vpp));
    for (int64_t s = 0; s < plan.pp; ++s) {
      for (int64_t c = 0; c < plan.vpp; ++c) {
        const ChunkTime& ch = chunks[s][c];
        out.chunk_parts[s][c] = {ch.forward, ch.backward, ch.recompute.total(), ch.fsdp_forward,
                                 ch.fsdp_backward};
      }
    }
  }

  // Data-parallel gradient reduction per stage, then the optimizer and the parameter
  // all-gather of the distributed optimizer.
  const GroupPlacement dp_group =
      place_group(plan, node,
                  traits.cp_shards_optimizer ? std::vector<std::string>{"dp", "cp"}
                                             : std::vector<std::string>{"dp"});
  const int64_t expert_dp =
      std::max<int64_t>(1, plan.dp * plan.cp * plan.tp / (plan.ep * plan.expert_tp()));
  const GroupPlacement expert_dp_group =
      place_strided(expert_dp, plan.ep * plan.expert_tp(), node, plan.num_gpus());
  // The distributed optimizer gathers updated parameters in the compute precision, in fp8
  // where the parameters are fp8 (fp8_param_gather), or in the grad buffer's dtype where it
  // gathers through that buffer (FrameworkTraits::param_gather_in_grad_dtype).
  const double param_gather_bytes = fp8_params_apply(traits, node.gpu)  ? 1.0
                                    : traits.param_gather_in_grad_dtype ? traits.grad_bytes
                                                                        : bpv;
  double best_end = 0;
  std::vector<double> dp_exposed(plan.pp, 0.0);
  std::vector<double> optimizer_s(plan.pp, 0.0);
  double hidden_dp = 0;
  for (int64_t s = 0; s < plan.pp; ++s) {
    const StageParameters& sp = stages[s];
    double stage_comm = 0;
    double gather_comm = 0;
    // Trainable parameters: everything, or only the adapters under LoRA.
    const double trainable_dense = lora ? sp.adapter_params : sp.dense_params;
    const double trainable_expert = lora ? 0.0 : sp.expert_params;
    if (!per_layer_fsdp) {
      const Collective reduce =
          plan.zero_stage >= 1 ? Collective::ReduceScatter : Collective::AllReduce;
      stage_comm +=
          collective_cost(node, reduce, dp_group, trainable_dense * traits.grad_reduce_bytes)
              .time_s;
      stage_comm += collective_cost(node, reduce, expert_dp_group,
                                    trainable_expert * traits.grad_reduce_bytes)
                        .time_s;
      if (plan.zero_stage >= 1) {
        gather_comm += collective_cost(node, Collective::AllGather, dp_group,
                                       trainable_dense * param_gather_bytes)
                           .time_s;
        gather_comm += collective_cost(node, Collective::AllGather, expert_dp_group,
                                       trainable_expert * param_gather_bytes)
                           .time_s;
      }
    }
    // Reduction of each chunk's gradients can start during its last backward pass.
    double end = out.pipeline.finish_s[s];
    if (traits.overlap_dp_grad_reduce && stage_comm > 0) {
      std::vector<int64_t> order(plan.vpp);
      for (int64_t c = 0; c < plan.vpp; ++c) order[c] = c;
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return out.pipeline.last_backward_start_s[s][a] < out.pipeline.last_backward_start_s[s][b];
      });
      double channel = 0;
      const double params_per_chunk =
          (trainable_dense + trainable_expert) / static_cast<double>(plan.vpp);
      const double last_bucket = std::min(1.0, kGradBucketParams / std::max(1.0, params_per_chunk));
      for (int64_t c : order) {
        const double comm = stage_comm / static_cast<double>(plan.vpp);
        const double start = std::max(channel, out.pipeline.last_backward_start_s[s][c]);
        channel =
            std::max(start + comm, out.pipeline.last_backward_end_s[s][c] + comm * last_bucket);
      }
      end = std::max(end, channel);
      hidden_dp += 0;
    } else {
      end += stage_comm;
    }
    dp_exposed[s] = end - out.pipeline.finish_s[s];
    // Gradient reduction hidden under the last backward passes slows them by the SMs it holds.
    dp_exposed[s] += comm_sm_fraction(node.gpu) * std::max(stage_comm - dp_exposed[s], 0.0);
    const double gather_exposed =
        traits.overlap_param_gather
            ? gather_comm * std::min(1.0, kGradBucketParams /
                                              std::max(1.0, sp.dense_params + sp.expert_params))
            : gather_comm;
    dp_exposed[s] += gather_exposed;
    hidden_dp = std::max(hidden_dp, stage_comm + gather_comm - dp_exposed[s]);
    // Optimizer over the parameters this GPU updates (its ZeRO shard).
    double updated = trainable_dense + trainable_expert;
    if (plan.zero_stage >= 1) {
      updated = trainable_dense / static_cast<double>(sp.dense_shard_group) +
                trainable_expert / static_cast<double>(sp.expert_shard_group);
    }
    const GpuSpec& gpu = node.gpu;
    if (auto it = gpu.kernel_gbps.find("adamw"); it != gpu.kernel_gbps.end()) {
      // A measured AdamW kernel (profile): seven arrays per parameter, as the probe counts;
      // an unfused optimizer moves its traffic relative to a fused step on top.
      optimizer_s[s] = updated * 7 * traits.grad_bytes / (it->second * 1e9) *
                       traits.optimizer_step_bytes_per_param / kFusedAdamStepBytesPerParam;
    } else {
      optimizer_s[s] = updated * traits.optimizer_step_bytes_per_param /
                       (gpu.hbm_bandwidth_gbps * 1e9 * gpu.hbm_efficiency);
    }
    const double stage_end = out.pipeline.finish_s[s] + dp_exposed[s] + optimizer_s[s];
    if (stage_end > best_end) {
      best_end = stage_end;
      out.critical_stage = s;
    }
  }
  out.hidden_dp_comm = hidden_dp;
  out.dp_exposed_s = dp_exposed;
  out.optimizer_s = optimizer_s;
  out.step_time_s = best_end;
  // The breakdown follows the bottleneck stage: the one with the most work (busy time plus
  // its exposed reduction and optimizer). Everything else of the step is waiting on the
  // pipeline: warm-up and cool-down bubbles, imbalance between stages, p2p transfers.
  double most_work = -1;
  for (int64_t s = 0; s < plan.pp; ++s) {
    const double work = out.pipeline.busy_s[s] + dp_exposed[s] + optimizer_s[s];
    if (work > most_work) {
      most_work = work;
      out.critical_stage = s;
    }
  }

  StepBreakdown& br = out.breakdown;
  const int64_t cs = out.critical_stage;
  const double mb = static_cast<double>(m);
  double busy = 0;
  for (int64_t c = 0; c < plan.vpp; ++c) {
    const ChunkTime& ch = chunks[cs][c];
    const PassTime without_recompute_backward = [&] {
      PassTime b = ch.backward;
      b.compute -= ch.recompute.compute;
      b.tp_comm -= ch.recompute.tp_comm;
      b.cp_comm -= ch.recompute.cp_comm;
      b.ep_comm -= ch.recompute.ep_comm;
      return b;
    }();
    br.compute += mb * (ch.forward.compute + without_recompute_backward.compute);
    br.recompute += mb * ch.recompute.total();
    br.tp_comm += mb * (ch.forward.tp_comm + without_recompute_backward.tp_comm);
    br.cp_comm += mb * (ch.forward.cp_comm + without_recompute_backward.cp_comm);
    br.ep_comm += mb * (ch.forward.ep_comm + without_recompute_backward.ep_comm);
    br.fsdp_comm += mb * (ch.fsdp_forward + ch.fsdp_backward);
    busy += mb * (ch.forward_total() + ch.backward_total());
  }
  br.dp_comm = dp_exposed[cs];
  br.optimizer = optimizer_s[cs];
  br.pp_bubble = std::max(0.0, out.step_time_s - busy - br.dp_comm - br.optimizer);

  // Throughput and model FLOPs utilisation.
  const double gpus = static_cast<double>(job.cluster.num_gpus);
  out.tokens_per_s = training.tokens_per_step() / out.step_time_s;
  out.tokens_per_s_per_gpu = out.tokens_per_s / gpus;
  // Model FLOPs per step: every layer's forward+backward FLOPs on every micro-batch, summed
  // over the model-parallel GPUs of one replica, times the replicas (dp).
  double replica_flops = 0;
  double replica_hw_flops = 0;
  for (int64_t l = 0; l < model.num_layers; ++l) {
    const LayerTime& layer = model.is_moe_layer(l) ? moe : dense;
    replica_flops += layer.model_flops;
    replica_hw_flops += layer.executed_flops;
  }
  replica_flops += head.model_flops;
  replica_hw_flops += head.executed_flops;
  const double per_micro_batch_gpus = static_cast<double>(plan.tp * plan.cp);
  out.model_flops = replica_flops * per_micro_batch_gpus * mb * static_cast<double>(plan.dp);
  out.hardware_flops = replica_hw_flops * per_micro_batch_gpus * mb * static_cast<double>(plan.dp);
  out.model_tflops_per_gpu = out.model_flops / out.step_time_s / gpus / 1e12;
  // MFU against the peak the job's GEMMs run at (the 16-bit one for fp8 on an A100).
  out.mfu = out.model_tflops_per_gpu / node.gpu.computed_peak_tflops(training.precision);
  check_finite_estimate(job, out);
  return out;
}

}  // namespace parplan::cost
