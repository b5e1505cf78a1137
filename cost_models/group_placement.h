// Where the members of a communication group sit: how many share a node, how many nodes the
// group spans, and how many groups of the same kind share a node's NICs at the same time.
// Derived from the rank order (Megatron tp-cp-ep-dp-pp by default: tp fastest, so a tp group
// is consecutive ranks inside one node) and the node size. Tested in
// tests/cost_models/group_placement_test.cpp against core/rank_grid.h on small grids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/parallel_plan.h"

namespace parplan::cost {

struct GroupPlacement {
  int64_t size = 1;            // ranks in the group
  int64_t ranks_per_node = 1;  // members of the group inside one node
  int64_t nodes = 1;           // nodes the group spans
  // Fraction of a node's NICs available to this group when every GPU of the node is in a
  // group of the same kind communicating at once (ranks_per_node / gpus_per_node).
  double nic_share = 1.0;
  bool crosses_nodes() const { return nodes > 1; }
};

// The group over the named plan dimensions ("tp", "cp", "ep", "dp", "pp"; several names
// for a combined group such as {"dp", "cp"}), for the plan's rank order. `expert_dims`
// describes the expert grid (tp -> expert_tp, dp*cp -> ep * expert-dp) when true.
GroupPlacement place_group(const ParallelPlan& plan, const NodeSpec& node,
                           const std::vector<std::string>& dims);

// Placement of `size` ranks with a given stride between consecutive members.
GroupPlacement place_strided(int64_t size, int64_t stride, int64_t gpus_per_node);

}  // namespace parplan::cost
