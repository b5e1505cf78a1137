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

// A reduction or gather of a stage's `params` over `group` in buckets: one collective per
// bucket of each of its vpp model chunks, each paying the collective's latency (a ring's hop
// latencies over every rank of the group).
double bucketed_collective_s(const NodeSpec& node, const FrameworkTraits& traits, int64_t vpp,
                             Collective op, const GroupPlacement& group, double params,
                             double bytes_per_param) {
  if (params <= 0 || group.size <= 1) return 0.0;
  const double chunks = static_cast<double>(std::max<int64_t>(1, vpp));
  const double buckets = chunks * dp_buckets_per_chunk(traits, group.size, params / chunks);
  return buckets * collective_cost(node, op, group, params * bytes_per_param / buckets).time_s;
}

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

// The reduction of a stage's trainable gradients over dp (dense) and expert-dp (experts): a
// reduce-scatter under ZeRO, else an all-reduce; then the ZeRO parameter all-gathers.
StageComm stage_comm(const ParallelPlan& plan, const NodeSpec& node, const FrameworkTraits& traits,
                     const DataParallelGroups& groups, const TrainableParams& trainable) {
  StageComm comm;
  const Collective reduce =
      plan.zero_stage >= 1 ? Collective::ReduceScatter : Collective::AllReduce;
  comm.reduce_s = bucketed_collective_s(node, traits, plan.vpp, reduce, groups.dense,
                                        trainable.dense, traits.grad_reduce_bytes) +
                  bucketed_collective_s(node, traits, plan.vpp, reduce, groups.expert,
                                        trainable.expert, traits.grad_reduce_bytes);
  if (plan.zero_stage >= 1) {
    comm.gather_s =
        bucketed_collective_s(node, traits, plan.vpp, Collective::AllGather, groups.dense,
                              trainable.dense, groups.param_gather_bytes) +
        bucketed_collective_s(node, traits, plan.vpp, Collective::AllGather, groups.expert,
                              trainable.expert, groups.param_gather_bytes);
  }
  return comm;
}

// Hybrid sharding (zero_shard_size < the data-parallel group): per-layer ZeRO-3 / FSDP
// reduce-scatters gradients inside each shard group (fsdp_layer_costs), and the shard groups'
// replicas then all-reduce their gradient shards once per step (PyTorch HSDP: reduce-scatter
// within the shard group, all-reduce across replicate groups; DeepSpeed ZeRO++ hpZ alike).
StageComm replica_all_reduce(const ParallelPlan& plan, const NodeSpec& node,
                             const FrameworkTraits& traits, const StageParameters& sp,
                             const TrainableParams& trainable) {
  StageComm comm;
  const int64_t dense_group = traits.cp_shards_optimizer ? plan.dp * plan.cp : plan.dp;
  if (plan.zero_shard_size <= 0 || plan.zero_shard_size >= dense_group) return comm;
  const int64_t replicas = dense_group / plan.zero_shard_size;
  const GroupPlacement group =
      place_strided(replicas, plan.tp * plan.zero_shard_size, node, plan.num_gpus());
  const double shard_params = trainable.dense / static_cast<double>(sp.dense_shard_group) +
                              trainable.expert / static_cast<double>(sp.expert_shard_group);
  comm.reduce_s =
      collective_cost(node, Collective::AllReduce, group, shard_params * traits.grad_reduce_bytes)
          .time_s;
  return comm;
}

// End of stage s's gradient reduction when each chunk's reduction starts during its last
// backward pass (one channel, chunks in the order their last backward starts; the last bucket
// of each chunk waits for the end of that backward).
double overlapped_reduction_end_s(const PipelineResult& pipeline, int64_t s, double reduce_s,
                                  double last_bucket) {
  const std::vector<double>& starts = pipeline.last_backward_start_s[s];
  const std::vector<double>& ends = pipeline.last_backward_end_s[s];
  const auto vpp = static_cast<int64_t>(starts.size());
  std::vector<int64_t> order(vpp);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return starts[a] < starts[b]; });
  double channel = 0;
  for (int64_t c : order) {
    const double comm = reduce_s / static_cast<double>(vpp);
    const double start = std::max(channel, starts[c]);
    channel = std::max(start + comm, ends[c] + comm * last_bucket);
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
    const StageComm comm = per_layer_fsdp ? replica_all_reduce(plan, node, traits, sp, trainable)
                                          : stage_comm(plan, node, traits, groups, trainable);
    const double finish = pipeline.finish_s[s];
    // Each chunk's last bucket waits for the end of its backward; the gather's first bucket
    // waits for the optimizer step.
    const double chunk_buckets =
        dp_buckets_per_chunk(traits, groups.dense.size,
                             (trainable.dense + trainable.expert) / static_cast<double>(plan.vpp));
    const double end =
        traits.overlap_dp_grad_reduce && comm.reduce_s > 0
            ? overlapped_reduction_end_s(pipeline, s, comm.reduce_s, 1.0 / chunk_buckets)
            : finish + comm.reduce_s;
    double& exposed = out.exposed_s[s];
    exposed = end - finish;
    // Gradient reduction hidden under the last backward passes slows them by the SMs it holds.
    exposed += sm_share * std::max(comm.reduce_s - exposed, 0.0);
    // Prefetched under compute, the parameter all-gather exposes only its first bucket.
    const double gather_exposed =
        traits.overlap_param_gather
            ? comm.gather_s / (chunk_buckets * static_cast<double>(plan.vpp))
            : comm.gather_s;
    exposed += gather_exposed;
    out.hidden_s = std::max(out.hidden_s, comm.reduce_s + comm.gather_s - exposed);
    out.optimizer_s[s] = optimizer_step_s(updated_params(sp, plan, trainable), node.gpu, traits,
                                          job.training.precision);
  }
  return out;
}

}  // namespace parplan::cost
