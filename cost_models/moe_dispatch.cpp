#include "cost_models/moe_dispatch.h"

#include <algorithm>

#include "core/collective.h"
#include "core/units.h"
#include "cost_models/collective_model.h"

namespace parplan::cost {

namespace {

// C(e - miss, k) / C(e, k): the probability that k distinct experts drawn uniformly from e
// avoid a given set of `miss` experts.
double probability_avoiding(double e, double miss, int64_t k) {
  double p = 1.0;
  for (int64_t i = 0; i < k; ++i) {
    const double d = static_cast<double>(i);
    if (e - d <= 0) return 0.0;
    p *= std::max(0.0, (e - miss - d) / (e - d));
  }
  return p;
}

// DeepEP's kernels use RDMA and NVLink (IBGDA, TMA): Hopper (sm_90) and later (DeepEP
// README, "Requirements: Hopper GPUs"; Megatron-Core MoE README: "DeepEP support for H100 and
// B200").
bool gpu_runs_deepep(const GpuSpec& gpu) {
  return gpu.vendor == "nvidia" &&
         (gpu.architecture == "hopper" || gpu.architecture == "blackwell");
}

}  // namespace

MoeDispatcher resolved_moe_dispatcher(const FrameworkTraits& traits, const ParallelPlan& plan,
                                      const NodeSpec& node, const GroupPlacement& ep_group) {
  if (plan.moe_dispatcher != MoeDispatcher::Auto) return plan.moe_dispatcher;
  if (traits.moe_dedup_dispatch_across_nodes && plan.ep > 1 && ep_group.crosses_nodes() &&
      gpu_runs_deepep(node.gpu)) {
    return MoeDispatcher::DeepEP;
  }
  return MoeDispatcher::AllToAll;
}

MoeDispatcher resolved_moe_dispatcher(const Job& job) {
  return resolved_moe_dispatcher(framework_traits(job.framework, job.training, job.plan), job.plan,
                                 job.cluster.node, place_group(job.plan, job.cluster.node, {"ep"}));
}

double expected_remote_nodes(int64_t experts, int64_t top_k, int64_t nodes) {
  if (nodes <= 1 || experts <= 0) return 0.0;
  const double e = static_cast<double>(experts);
  const double n = static_cast<double>(nodes);
  return (n - 1) * (1 - probability_avoiding(e, e / n, std::min(top_k, experts)));
}

double expected_ranks_reached(int64_t experts, int64_t top_k, int64_t ranks) {
  if (ranks <= 0 || experts <= 0) return 0.0;
  const double e = static_cast<double>(experts);
  const double r = static_cast<double>(ranks);
  return r * (1 - probability_avoiding(e, e / r, std::min(top_k, experts)));
}

double dedup_dispatch_time_s(const NodeSpec& node, const GroupPlacement& ep_group, double tokens,
                             double token_bytes, int64_t experts, int64_t top_k) {
  if (ep_group.size <= 1 || tokens <= 0) return 0.0;
  if (!ep_group.crosses_nodes()) {
    // Inside one NVLink domain the deduplication saves nothing: every routed copy goes to
    // its rank over NVLink, as in the all-to-all.
    const double bytes = tokens * token_bytes * static_cast<double>(top_k);
    return collective_cost(node, Collective::AllToAll, ep_group, bytes).time_s;
  }
  // Network: one copy per other destination node, each GPU on its own NIC share (every GPU of
  // the node dispatches at once).
  const double remote = expected_remote_nodes(experts, top_k, ep_group.nodes);
  const double nic_bytes_per_s = static_cast<double>(node.inter.nics_per_node) *
                                 node.nic_bandwidth_bytes_per_s() /
                                 static_cast<double>(std::max<int64_t>(1, node.gpus_per_node));
  const double network_s =
      nic_bytes_per_s > 0 ? tokens * token_bytes * remote / nic_bytes_per_s : 0.0;
  // NVLink: each copy bound for a distinct rank is written to it once on its node (the local
  // ranks directly, the remote ones by the forwarding GPU of that node).
  const double copies = expected_ranks_reached(experts, top_k, ep_group.size);
  const double nvlink_bytes_per_s = gbps_to_bytes_per_s(
      intra_node_busbw_gbps(node, Collective::AllToAll,
                            std::max<int64_t>(2, ep_group.ranks_per_node), tokens * token_bytes));
  const double nvlink_s = tokens * token_bytes * copies / nvlink_bytes_per_s;
  return node.inter.latency_us * kUs + std::max(network_s, nvlink_s);
}

ExposedA2a overlapped_a2a_exposure(const MoeLayerCompute& c, double a2a_s) {
  auto exposed = [a2a_s](double beside) { return std::max(a2a_s - beside, 0.0); };
  ExposedA2a out;
  out.forward = exposed(c.moe_backward) + exposed(c.attention_backward);
  out.backward = exposed(c.attention_forward) + exposed(c.moe_forward);
  return out;
}

int64_t combined_1f1b_warmup_forwards(const PipelineShape& shape, int64_t stage) {
  const int64_t chunks = shape.num_micro_batches * shape.vpp;
  return std::min(warmup_forwards(shape, stage) + 1, chunks);
}

double unpaired_chunk_fraction(const PipelineShape& shape, int64_t stage) {
  const int64_t chunks = shape.num_micro_batches * shape.vpp;
  if (chunks <= 0) return 1.0;
  return static_cast<double>(combined_1f1b_warmup_forwards(shape, stage)) /
         static_cast<double>(chunks);
}

}  // namespace parplan::cost
