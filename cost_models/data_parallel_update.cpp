#include "cost_models/data_parallel_update.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/collective.h"
#include "core/units.h"
#include "cost_models/collective_model.h"
#include "cost_models/layer_cost.h"

namespace parplan::cost {

namespace {

// Parameters a stage trains: everything, or only the adapters under LoRA.
struct TrainableParams {
  double dense = 0;
  double expert = 0;
};

TrainableParams trainable_params(const StageParameters& sp, bool lora) {
  return {lora ? sp.adapter_params : sp.dense_params, lora ? 0.0 : sp.expert_params};
}

// One stage's data-parallel collectives, seconds: the gradient reduction, and the parameter
// all-gather of the distributed optimizer (ZeRO stage 1 and above).
struct StageComm {
  double reduce_s = 0;
  double gather_s = 0;
  // Per model chunk of the stage (empty when the reduction is not bucketed by chunk): its
  // reduction's seconds and the share its last bucket holds, which waits for the end of the
  // chunk's last backward.
  std::vector<double> chunk_reduce_s;
  std::vector<double> chunk_last_bucket;
  // Share of the parameter all-gather in its first collective, which the next forward waits
  // for where the framework prefetches the rest.
  double first_gather_share = 1.0;
};

// The groups and the gathered precision are the same for every stage.
struct DataParallelGroups {
  GroupPlacement dense;
  GroupPlacement expert;
  double param_gather_bytes = 0;  // per parameter
};

DataParallelGroups data_parallel_groups(const ParallelPlan& plan, const NodeSpec& node,
                                        const FrameworkTraits& traits, Precision precision) {
  DataParallelGroups groups;
  groups.dense = data_parallel_group(plan, node, traits);
  const int64_t expert_dp =
      std::max<int64_t>(1, plan.dp * plan.cp * plan.tp / (plan.ep * plan.expert_tp()));
  groups.expert = place_strided(expert_dp, plan.ep * plan.expert_tp(), node, plan.num_gpus());
  // The distributed optimizer gathers updated parameters in the compute precision, in fp8
  // where per-tensor-scaled parameters are fp8 (fp8_param_gather), or in the grad buffer's
  // dtype where it gathers through that buffer (FrameworkTraits::param_gather_in_grad_dtype).
  // MXFP8 parameters are gathered in bf16 through the gradient buffer, then quantised into
  // their MXFP8 storage (Megatron-Core param_and_grad_buffer.py: a bf16 view of the shared
  // buffer, "reuse_grad_buf_for_mxfp8_param_ag").
  const bool fp8_gather = fp8_params_kept(traits, plan) && !fp8_recipe_is_mxfp8(node.gpu);
  groups.param_gather_bytes = fp8_gather                          ? 1.0
                              : traits.param_gather_in_grad_dtype ? traits.grad_bytes
                                                                  : activation_bytes(precision);
  return groups;
}

// Collectives of one model chunk's `params` of a stage: its buckets
// (FrameworkTraits::dp_bucket_params), or one per layer where an FSDP framework shards the
// gradients (FrameworkTraits::dp_collectives_per_layer_when_sharded: one per FSDP unit, a
// transformer block), or one for the whole buffer where the framework buckets only the first
// chunk of the first stage (FrameworkTraits::dp_bucket_first_chunk_only).
double chunk_collectives(const FrameworkTraits& traits, const ParallelPlan& plan, int64_t stage,
                         int64_t chunk, int64_t group_size, double params,
                         double layers_per_chunk) {
  if (traits.dp_collectives_per_layer_when_sharded && plan.zero_stage >= 2) {
    return std::max(1.0, std::ceil(layers_per_chunk));
  }
  if (traits.dp_bucket_first_chunk_only && (stage > 0 || chunk > 0)) return 1.0;
  return dp_buckets_per_chunk(traits, group_size, params);
}

// `collectives` collectives over `group` moving `params` in all, each paying its latency (a
// ring's hop latencies over every rank of the group).
double collectives_s(const NodeSpec& node, Collective op, const GroupPlacement& group,
                     double params, double bytes_per_param, double collectives) {
  if (params <= 0 || group.size <= 1) return 0.0;
  return collectives *
         collective_cost(node, op, group, params * bytes_per_param / collectives).time_s;
}

// The reduction of a stage's trainable gradients over dp (dense) and expert-dp (experts): a
// reduce-scatter under ZeRO, else an all-reduce; then the ZeRO parameter all-gathers. Each
// model chunk has its own gradient buffer and buckets (Megatron-Core: one
// DistributedDataParallel per chunk); the experts' buffer takes the dense buckets' size.
StageComm stage_comm(const ParallelPlan& plan, const NodeSpec& node, const FrameworkTraits& traits,
                     const DataParallelGroups& groups, const StageParameters& sp,
                     const TrainableParams& trainable) {
  StageComm comm;
  const Collective reduce =
      plan.zero_stage >= 1 ? Collective::ReduceScatter : Collective::AllReduce;
  const double vpp = static_cast<double>(plan.vpp);
  const double dense = trainable.dense / vpp;
  const double expert = trainable.expert / vpp;
  const double layers = static_cast<double>(sp.num_layers) / vpp;
  const double moe_layers = static_cast<double>(sp.num_moe_layers) / vpp;
  const int64_t size = groups.dense.size;
  // The chunks of a stage hold the same parameters and differ at most in their collective
  // counts: each distinct count is costed once (the planner evaluates this for every plan).
  struct ChunkCost {
    double dense_n = -1, expert_n = -1, reduce_s = 0, last_bucket = 1, gather_s = 0;
  } last;
  for (int64_t c = 0; c < plan.vpp; ++c) {
    const double dense_n = chunk_collectives(traits, plan, sp.stage, c, size, dense, layers);
    const double expert_n = chunk_collectives(traits, plan, sp.stage, c, size, expert, moe_layers);
    if (dense_n != last.dense_n || expert_n != last.expert_n) {
      const double dense_s =
          collectives_s(node, reduce, groups.dense, dense, traits.grad_reduce_bytes, dense_n);
      const double expert_s =
          collectives_s(node, reduce, groups.expert, expert, traits.grad_reduce_bytes, expert_n);
      // What waits for the end of the chunk's backward: its last dense and expert buckets.
      const double last_s = dense_s / dense_n + expert_s / expert_n;
      last = {dense_n, expert_n, dense_s + expert_s,
              dense_s + expert_s > 0 ? last_s / (dense_s + expert_s) : 1.0, 0.0};
      if (plan.zero_stage >= 1) {
        last.gather_s = collectives_s(node, Collective::AllGather, groups.dense, dense,
                                      groups.param_gather_bytes, dense_n) +
                        collectives_s(node, Collective::AllGather, groups.expert, expert,
                                      groups.param_gather_bytes, expert_n);
      }
    }
    comm.chunk_reduce_s.push_back(last.reduce_s);
    comm.chunk_last_bucket.push_back(last.last_bucket);
    comm.reduce_s += last.reduce_s;
    comm.gather_s += last.gather_s;
  }
  // The gather's first collective: a bucket's worth of the stage, or one layer where FSDP
  // gathers per transformer block.
  comm.first_gather_share =
      1.0 / (traits.dp_collectives_per_layer_when_sharded && plan.zero_stage >= 2
                 ? std::max(1.0, static_cast<double>(sp.num_layers))
                 : dp_buckets_per_chunk(traits, size, trainable.dense + trainable.expert));
  return comm;
}

// Hybrid sharding (zero_shard_size < the data-parallel group): per-layer ZeRO-3 / FSDP
// reduce-scatters gradients inside each shard group (fsdp_layer_costs), and the shard groups'
// replicas then all-reduce their gradient shards once per step (PyTorch HSDP: reduce-scatter
// within the shard group, all-reduce across replicate groups; DeepSpeed ZeRO++ hpZ alike).
StageComm replica_all_reduce(const ParallelPlan& plan, const NodeSpec& node,
                             const FrameworkTraits& traits, const DataParallelGroups& groups,
                             const StageParameters& sp, const TrainableParams& trainable) {
  StageComm comm;
  const int64_t dense_group = traits.cp_shards_optimizer ? plan.dp * plan.cp : plan.dp;
  if (plan.zero_shard_size <= 0 || plan.zero_shard_size >= dense_group) return comm;
  const int64_t replicas = dense_group / plan.zero_shard_size;
  const GroupPlacement group =
      place_strided(replicas, plan.tp * plan.zero_shard_size, node, plan.num_gpus());
  comm.reduce_s = collective_cost(node, Collective::AllReduce, group,
                                  trainable.dense / static_cast<double>(sp.dense_shard_group) *
                                      traits.grad_reduce_bytes)
                      .time_s;
  // The experts' replicas: the expert-dp ranks outside one expert shard group (none when a
  // shard group holds them all).
  const int64_t expert_replicas = groups.expert.size / std::max<int64_t>(1, sp.expert_shard_group);
  if (expert_replicas > 1 && trainable.expert > 0) {
    const GroupPlacement experts = place_strided(
        expert_replicas, plan.ep * plan.expert_tp() * sp.expert_shard_group, node, plan.num_gpus());
    comm.reduce_s += collective_cost(node, Collective::AllReduce, experts,
                                     trainable.expert / static_cast<double>(sp.expert_shard_group) *
                                         traits.grad_reduce_bytes)
                         .time_s;
  }
  return comm;
}

// End of stage s's gradient reduction when each chunk's reduction starts during its last
// backward pass (one channel, chunks in the order their last backward starts; the last bucket
// of each chunk waits for the end of that backward).
double overlapped_reduction_end_s(const PipelineResult& pipeline, int64_t s,
                                  const StageComm& comm) {
  const std::vector<double>& starts = pipeline.last_backward_start_s[s];
  const std::vector<double>& ends = pipeline.last_backward_end_s[s];
  const auto vpp = static_cast<int64_t>(starts.size());
  std::vector<int64_t> order(vpp);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return starts[a] < starts[b]; });
  const bool per_chunk = static_cast<int64_t>(comm.chunk_reduce_s.size()) == vpp;
  double channel = 0;
  for (int64_t c : order) {
    const double reduce = per_chunk ? comm.chunk_reduce_s[c] : comm.reduce_s / vpp;
    const double last_bucket = per_chunk ? comm.chunk_last_bucket[c] : 1.0;
    const double start = std::max(channel, starts[c]);
    channel = std::max(start + reduce, ends[c] + reduce * last_bucket);
  }
  return std::max(pipeline.finish_s[s], channel);
}

// Seconds of the optimizer step over `updated` parameters.
double optimizer_step_s(double updated, const GpuSpec& gpu, const FrameworkTraits& traits,
                        Precision job_precision) {
  auto it = gpu.kernel_gbps.find("adamw");
  if (it != gpu.kernel_gbps.end() && gpu.kernel_figures_apply(job_precision)) {
    // A measured AdamW kernel (profile): seven arrays per parameter, as the probe counts;
    // an unfused optimizer moves its traffic relative to a fused step on top.
    return updated * 7 * traits.grad_bytes / gbps_to_bytes_per_s(it->second) *
           traits.optimizer_step_bytes_per_param / kFusedAdamStepBytesPerParam;
  }
  return updated * traits.optimizer_step_bytes_per_param /
         (gbps_to_bytes_per_s(gpu.hbm_bandwidth_gbps) * gpu.hbm_efficiency);
}

// Parameters this GPU updates: its ZeRO shard of the trainable ones.
double updated_params(const StageParameters& sp, const ParallelPlan& plan,
                      const TrainableParams& trainable) {
  if (plan.zero_stage < 1) return trainable.dense + trainable.expert;
  return trainable.dense / static_cast<double>(sp.dense_shard_group) +
         trainable.expert / static_cast<double>(sp.expert_shard_group);
}

}  // namespace

double dp_buckets_per_chunk(const FrameworkTraits& traits, int64_t group_size,
                            double params_per_chunk) {
  const double bucket = std::max(
      traits.dp_bucket_params, traits.dp_bucket_params_per_rank * static_cast<double>(group_size));
  return bucket > 0 ? std::max(1.0, std::ceil(params_per_chunk / bucket)) : 1.0;
}

GroupPlacement data_parallel_group(const ParallelPlan& plan, const NodeSpec& node,
                                   const FrameworkTraits& traits) {
  return place_group(plan, node,
                     traits.cp_shards_optimizer ? std::vector<std::string>{"dp", "cp"}
                                                : std::vector<std::string>{"dp"});
}

DataParallelUpdate data_parallel_update(const Job& job, const FrameworkTraits& traits,
                                        const std::vector<StageParameters>& stages,
                                        const PipelineResult& pipeline, bool per_layer_fsdp) {
  const ParallelPlan& plan = job.plan;
  const NodeSpec& node = job.cluster.node;
  const bool lora = job.training.method == TrainingMethod::Lora;
  const DataParallelGroups groups =
      data_parallel_groups(plan, node, traits, job.training.precision);
  const double sm_share = comm_sm_fraction(node.gpu);
  DataParallelUpdate out;
  out.exposed_s.assign(plan.pp, 0.0);
  out.optimizer_s.assign(plan.pp, 0.0);
  for (int64_t s = 0; s < plan.pp; ++s) {
    const StageParameters& sp = stages[s];
    const TrainableParams trainable = trainable_params(sp, lora);
    const StageComm comm = per_layer_fsdp
                               ? replica_all_reduce(plan, node, traits, groups, sp, trainable)
                               : stage_comm(plan, node, traits, groups, sp, trainable);
    const double finish = pipeline.finish_s[s];
    const double end = traits.overlap_dp_grad_reduce && comm.reduce_s > 0
                           ? overlapped_reduction_end_s(pipeline, s, comm)
                           : finish + comm.reduce_s;
    double& exposed = out.exposed_s[s];
    exposed = end - finish;
    // Gradient reduction hidden under the last backward passes slows them by the SMs it holds.
    exposed += sm_share * std::max(comm.reduce_s - exposed, 0.0);
    // Prefetched under compute, the parameter all-gather exposes only its first bucket's
    // worth (on later stages the pipeline's fill covers the rest).
    const double gather_exposed =
        traits.overlap_param_gather ? comm.gather_s * comm.first_gather_share : comm.gather_s;
    exposed += gather_exposed;
    out.hidden_s = std::max(out.hidden_s, comm.reduce_s + comm.gather_s - exposed);
    out.optimizer_s[s] = optimizer_step_s(updated_params(sp, plan, trainable), node.gpu, traits,
                                          job.training.precision);
  }
  return out;
}

}  // namespace parplan::cost
