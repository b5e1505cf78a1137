// MoE token dispatch: which dispatcher a plan runs, what its all-to-alls cost, and how much of
// them Megatron-Core's batch-level overlap hides.
//
// - NCCL all-to-all (Megatron-Core "alltoall"): each of a token's top_k routed copies travels
//   to the rank of its expert, so of a GPU's k*T*h values, the share bound for ranks on other
//   nodes crosses the network (collective_model.h).
// - DeepEP / HybridEP (Megatron-Core "flex"): "removes redundant tokens during cross-node
//   communication, fuses intra/inter-node communication into single kernel" (Megatron-Core
//   moe/README.md, token dispatcher table): a token crosses the network once per destination
//   node, to the GPU of the same local index there, and is forwarded over NVLink to the GPUs
//   holding its experts (DeepSeek-V3 report, arXiv 2412.19437, §3.2.2). With balanced routing
//   over E experts spread evenly over the group's N nodes, a token's k distinct experts miss a
//   given node with probability C(E - E/N, k) / C(E, k), so it reaches
//   (N - 1) (1 - C(E - E/N, k) / C(E, k)) other nodes instead of k (N - 1) / N copies.
// - Batch-level overlap (--overlap-moe-expert-parallel-comm, Megatron-Core
//   models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run): the forward
//   of one micro-batch and the backward of another run layer by layer on two streams,
//     comm:    combine_bwd      | dispatch_fwd, dispatch_bwd      | combine_fwd
//     compute: attention fwd    | MoE bwd, MoE fwd                | attention bwd
//   each phase as long as its longer stream: an all-to-all hides under the other micro-batch's
//   computation of that phase and no other.
// Tested in tests/cost_models/moe_dispatch_test.cpp.
#pragma once

#include <cstdint>

#include "core/cluster_spec.h"
#include "core/job.h"
#include "core/parallel_plan.h"
#include "core/schedule.h"
#include "cost_models/framework_traits.h"
#include "cost_models/group_placement.h"

namespace parplan::cost {

// The dispatcher the plan runs: the plan's own choice, or for "auto" the framework's recipe
// choice (FrameworkTraits::moe_dedup_dispatch_across_nodes: DeepEP when the expert-parallel
// group leaves the node's NVLink domain on a GPU DeepEP supports, Hopper or later), else the
// NCCL all-to-all.
MoeDispatcher resolved_moe_dispatcher(const FrameworkTraits& traits, const ParallelPlan& plan,
                                      const NodeSpec& node, const GroupPlacement& ep_group);
// The same for a job: its framework's traits and its plan's expert-parallel group.
MoeDispatcher resolved_moe_dispatcher(const Job& job);

// Expected number of other nodes a token's top_k distinct experts sit on, with `experts`
// spread evenly over `nodes` nodes and routing balanced over them.
double expected_remote_nodes(int64_t experts, int64_t top_k, int64_t nodes);
// Expected number of distinct ranks of a `ranks`-rank group a token's top_k experts sit on.
double expected_ranks_reached(int64_t experts, int64_t top_k, int64_t ranks);

// Seconds of one dispatch (or combine) of `tokens` tokens of `token_bytes` each by a
// deduplicating dispatcher over `ep_group`: the network share at the node's NIC bandwidth
// per GPU and the NVLink forwarding to the expert ranks, whichever is longer, plus one
// network latency. Inside one node, an all-to-all of the routed copies.
double dedup_dispatch_time_s(const NodeSpec& node, const GroupPlacement& ep_group, double tokens,
                             double token_bytes, int64_t experts, int64_t top_k);

// Per-layer computation of one micro-batch, split where the combined 1F1B splits it: the
// attention half (everything before the dispatch: norms, attention, router) and the MoE half
// (experts, permutation, shared experts), forward and backward.
struct MoeLayerCompute {
  double attention_forward = 0;
  double moe_forward = 0;
  double attention_backward = 0;
  double moe_backward = 0;
};

// Exposed all-to-all seconds under the batch-level overlap, given one all-to-all's time, by
// the pass that issues it: forward (dispatch_fwd beside the other micro-batch's MoE bwd,
// combine_fwd beside its attention bwd) and backward (combine_bwd beside attention fwd,
// dispatch_bwd beside MoE fwd), each the part of the all-to-all longer than the computation
// beside it.
struct ExposedA2a {
  double forward = 0;
  double backward = 0;
};
ExposedA2a overlapped_a2a_exposure(const MoeLayerCompute& compute, double a2a_s);

// Share of a stage's forward (and backward) chunks that the combined 1F1B runs with no partner
// of the other phase, so that their all-to-alls stay exposed: the first forward and the last
// backward without pipelining (Megatron-LM docs, moe_a2a_overlap.md, "Schedule overview"); with
// pp stages the interleaved schedule's warm-up forwards plus the one more the overlap adds
// (Megatron-Core schedules.py), and as many cool-down backwards, at most all m * vpp chunks.
// Averaged over the stages of an uncapped schedule: pp * vpp of the m * vpp chunks, pp / m.
int64_t combined_1f1b_warmup_forwards(const PipelineShape& shape, int64_t stage);
double unpaired_chunk_fraction(const PipelineShape& shape, int64_t stage);

}  // namespace parplan::cost
