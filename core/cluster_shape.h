// How a job's GPUs sit on its nodes, in words: "32 x dgx-h100 (256 GPUs)", "1 x dgx-h100 (4
// GPUs)", "12 full dgx-h100 nodes + 4 GPUs (100 GPUs)", "256 x gb200-nvl72 using 64 of 72 GPUs each
// (16384 GPUs)"; and the warning for a GPU count that is not a whole number of nodes, which asks
// whether partial nodes are meant and names the whole-node counts around it (and, for nodes whose
// GPU count is not a power of two, such as 72-GPU NVL72 racks, the common layout using a power of
// two of them, 64 of 72: cluster.gpus_used_per_node). Tested in tests/core/cluster_shape_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/cluster_spec.h"

namespace parplan {

std::string cluster_shape_text(const ClusterSpec& cluster);

// The largest power of two not above n (n >= 1): 64 for a 72-GPU rack.
int64_t power_of_two_floor(int64_t n);

// For num_gpus that leave a partial node: "100 GPUs are 12 full dgx-h100 nodes + 4 GPUs on one
// more node; the prediction takes them as given (a partial node): if whole nodes are meant, give
// num_nodes 12 (96 GPUs) or 13 (104 GPUs)". None for whole nodes.
std::optional<std::string> partial_node_warning(const ClusterSpec& cluster);

// For nodes whose GPU count is not a power of two: "the common layout uses 64 of each node's
// 72 GPUs (cluster.gpus_used_per_node 64): num_nodes 224 gives 14336 GPUs". None otherwise.
std::optional<std::string> power_of_two_layout_hint(const ClusterSpec& cluster);

}  // namespace parplan
