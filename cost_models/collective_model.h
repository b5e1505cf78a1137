// Time of one collective on a placed group: latency + S * bus_factor / busbw (nccl-tests
// conventions, core/collective.h), with the bus bandwidth set by the bottleneck link the
// group crosses:
//   inside a node: NVSwitch ring busbw = link * efficiency (NVLS for large all-reduces),
//     full mesh (Infinity Fabric) = (ranks - 1) * per-peer link * efficiency, PCIe = the
//     PCIe link (NVLink-bridged islands at bridge bandwidth);
//   across nodes: min(intra busbw, NICs available to the group * achievable NIC bandwidth),
//     the NICs of a node being shared by every group of the same kind on it.
// Latency: the node's small-message figure; across nodes it grows with log2(nodes) (tree /
// NVLS-tree algorithms, NCCL tuning.cc). A measured profile's fitted (latency, busbw) for
// the same op and span replaces the formula. Tested in tests/cost_models/collective_model_test.cpp.
#pragma once

#include "core/cluster_spec.h"
#include "core/collective.h"
#include "cost_models/group_placement.h"

namespace parplan::cost {

struct CollectiveCost {
  double time_s = 0;
  double busbw_gbps = 0;
  double latency_s = 0;
};

// Bus bandwidth of a collective among `ranks` GPUs of one node, GB/s.
double intra_node_busbw_gbps(const NodeSpec& node, Collective op, int64_t ranks, double size_bytes);

// `size_bytes` is the nccl-tests size S (see core/collective.h).
CollectiveCost collective_cost(const NodeSpec& node, Collective op, const GroupPlacement& group,
                               double size_bytes);

}  // namespace parplan::cost
