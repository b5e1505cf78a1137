// Where the members of a communication group sit: how many share a node, how many nodes the
// group spans, and how many groups of the same kind share a node's NICs at the same time.
// Derived from the rank order (Megatron tp-cp-ep-dp-pp by default: tp fastest, so a tp group
// is consecutive ranks inside one node) and the node size. When node boundaries cut groups
// unevenly (tp = 3 on 8-GPU nodes: ranks 6, 7 | 8), the placement is that of the worst group,
// which the others wait for. Tested in tests/cost_models/group_placement_test.cpp against
// core/rank_grid.h on small grids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/parallel_plan.h"

namespace parplan::cost {

struct GroupPlacement {
  int64_t size = 1;            // ranks in the group
  int64_t ranks_per_node = 1;  // members of the group inside one node (its thinnest node)
  int64_t nodes = 1;           // nodes the group spans
  // Fraction of a node's NICs available to this group when every GPU of the node is in a
  // group of the same kind communicating at once (ranks_per_node / gpus_per_node).
  double nic_share = 1.0;
  bool crosses_nodes() const { return nodes > 1; }
};

// The group over the named plan dimensions ("tp", "cp", "ep", "dp", "pp"; several names
// for a combined group such as {"dp", "cp"}), for the plan's rank order, with ranks filling
// the job's nodes evenly (gpus_per_node_filled). An "ep" group follows the expert grid
// (tp -> expert_tp, dp*cp -> ep * expert-dp).
GroupPlacement place_group(const ParallelPlan& plan, const NodeSpec& node,
                           const std::vector<std::string>& dims);

// Placement of `size` ranks with a given stride between consecutive members, on nodes of
// `gpus_per_node` ranks.
GroupPlacement place_strided(int64_t size, int64_t stride, int64_t gpus_per_node);
// The same inside a job of `job_gpus` GPUs, laid out as place_group does.
GroupPlacement place_strided(int64_t size, int64_t stride, const NodeSpec& node, int64_t job_gpus);

// GPUs of each node that a job of `job_gpus` GPUs fills: the job takes the fewest nodes that
// hold it and spreads evenly over them when the count divides, as schedulers place jobs (a
// 256-GPU job on 72-GPU NVL72 racks: 4 racks of 64; 12 GPUs on 8-GPU nodes: 2 x 6); when it
// does not, ranks fill whole nodes in order (20 GPUs on 8-GPU nodes: 8 + 8 + 4).
int64_t gpus_per_node_filled(int64_t gpus_per_node, int64_t job_gpus);

}  // namespace parplan::cost
