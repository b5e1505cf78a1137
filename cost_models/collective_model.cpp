#include "cost_models/collective_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/hardware_profile.h"
#include "core/units.h"

namespace parplan::cost {

namespace {

// NVLink SHARP all-reduce pays off from 5 GPUs up and for messages past a few MiB
// (docs/sources/hardware_notes.md §3: "NVLS picked from 2 MiB up"; gains start at 5
// GPUs on H100/H200).
constexpr int64_t kNvlsMinRanks = 5;
constexpr double kNvlsMinBytes = 2.0 * kMiB;

// A measured fit for exactly this group size (or for any size), the one whose message-size
// range holds size_bytes (core/hardware_profile.h); none: the link formulas apply.
const CollectiveFit* find_fit(const NodeSpec& node, Collective op, bool inter, int64_t size,
                              double size_bytes) {
  const CollectiveFit* fit =
      find_collective_fit(node, op, inter ? "inter_node" : "intra_node", size, size_bytes);
  if (fit != nullptr && fit->group_size != size && fit->group_size != 0) return nullptr;
  return fit;
}

// NCCL's ring time model (src/graph/tuning.cc, NCCL 2.30; docs/sources/hardware_notes.md
// §6): a base latency plus one hop latency per ring step, n - nodes steps inside nodes and
// nodes - 1 over the network, per protocol, and the bytes at the protocol's share of the bus
// bandwidth. Simple moves the full bus bandwidth; LL128 120 of every 128 bytes (0.92 in
// NCCL's model; its per-channel LL128 cap is left out, parplan does not count channels); LL
// half of it, capped by llMaxBw. NCCL takes the fastest protocol.
struct RingProtocol {
  double base_us;
  double nvlink_hop_us;
  double pci_hop_us;
  double net_hop_us;
  double bandwidth_fraction;
  double net_overhead_multiple;  // of the host's per-step network overhead (Simple: x3)
};
constexpr RingProtocol kRingSimple{8.4, 3.4, 5.7, 14.0, 1.0, 3.0};
constexpr RingProtocol kRingLowLatency128{14.0, 1.9, 2.5, 4.0, 0.92, 1.0};
constexpr RingProtocol kRingLowLatency{6.6, 0.6, 1.0, 2.7, 0.5, 1.0};

// With several nodes every ring step inside a node costs at least the proxy's network
// overhead (getNetOverhead in tuning.cc): 2 us on AMD hosts, 1 us on the others (Intel, Arm).
double net_overhead_us(const NodeSpec& node) { return node.host_cpu_vendor == "amd" ? 2.0 : 1.0; }

// NCCL's cap on the LL protocol's bus bandwidth across nodes (llMaxBws in tuning.cc), GB/s: for
// more than one node NCCL picks the row by host CPU vendor, not by GPU (AMD hosts 22.5 over 2
// nodes and 19.0 over more, the others 39.0 and 20.4;
// docs/sources/hardware_reference.json nccl.llMaxBws_GBps). RCCL (other GPU vendors) has
// tables of its own: no cap.
double low_latency_max_busbw_gbps(const NodeSpec& node, int64_t nodes) {
  if (node.gpu.vendor != "nvidia") return std::numeric_limits<double>::infinity();
  const bool two = nodes <= 2;
  if (node.host_cpu_vendor == "amd") return two ? 22.5 : 19.0;
  return two ? 39.0 : 20.4;
}

// Time of a ring all-gather or reduce-scatter whose ring spans several nodes with several
// members on each: the (n-1)-step ring pays every hop's latency, which dominates for
// per-layer gathers over thousands of ranks (ZeRO-3/FSDP at scale). LL128 runs where NCCL
// enables it by default: NVIDIA GPUs joined by NVLink (intra path at most NVB: a switch or a
// direct mesh), not over PCIe.
double ring_time_s(const NodeSpec& node, const GroupPlacement& group, double bus_bytes,
                   double busbw_gbps) {
  const double intra_steps = static_cast<double>(group.size - group.nodes);
  const double inter_steps = static_cast<double>(group.nodes - 1);
  const bool pci = node.intra.fabric == IntraFabric::Pcie;
  const double overhead_us = net_overhead_us(node);
  // A protocol's time at its share of the bus bandwidth, at most `max_gbps`.
  auto time_s = [&](const RingProtocol& p, double max_gbps) {
    const double intra_hop_us =
        std::max(pci ? p.pci_hop_us : p.nvlink_hop_us, overhead_us * p.net_overhead_multiple);
    const double hops_us = intra_steps * intra_hop_us + inter_steps * p.net_hop_us;
    const double gbps = std::min(p.bandwidth_fraction * busbw_gbps, max_gbps);
    return (p.base_us + hops_us) * kUs + bus_bytes / (gbps * kGB);
  };
  constexpr double kUncapped = std::numeric_limits<double>::infinity();
  double best = std::min(time_s(kRingSimple, kUncapped),
                         time_s(kRingLowLatency, low_latency_max_busbw_gbps(node, group.nodes)));
  if (node.gpu.vendor == "nvidia" && !pci) {
    best = std::min(best, time_s(kRingLowLatency128, kUncapped));
  }
  return best;
}

// Network latencies a collective pays in sequence: log2(nodes) for the tree and
// recursive-doubling algorithms of collectives over several nodes, one for a send/receive,
// which is a neighbour exchange however many nodes its group spans (a context-parallel ring
// step or a pipeline transfer moves each message over one hop).
double network_hops(Collective op, double nodes) {
  if (op == Collective::SendRecv) return 1.0;
  return std::max(1.0, std::log2(nodes));
}

}  // namespace

double intra_node_busbw_gbps(const NodeSpec& node, Collective op, int64_t ranks,
                             double size_bytes) {
  const IntraNodeSpec& intra = node.intra;
  switch (intra.fabric) {
    case IntraFabric::Mesh: {
      // A ring uses one link per direction per GPU; RCCL runs rings over every peer link
      // at once, so bandwidth grows with the peers in the group (MI300X: 2 GPUs 47.7 GB/s,
      // 8 GPUs 312.9 GB/s busbw, docs/sources/hardware_notes.md §3).
      const double peers = static_cast<double>(std::max<int64_t>(1, ranks - 1));
      return peers * intra.link_bandwidth_gbps * intra.busbw_efficiency;
    }
    case IntraFabric::Pcie: {
      if (intra.island_gpus >= ranks && intra.island_bandwidth_gbps > 0) {
        return intra.island_bandwidth_gbps * intra.busbw_efficiency;
      }
      return intra.link_bandwidth_gbps * intra.busbw_efficiency;
    }
    case IntraFabric::Switch:
      break;
  }
  double busbw = intra.link_bandwidth_gbps * intra.busbw_efficiency;
  if (op == Collective::AllReduce && intra.nvls_allreduce_busbw_gbps > busbw &&
      ranks >= kNvlsMinRanks && size_bytes >= kNvlsMinBytes) {
    busbw = intra.nvls_allreduce_busbw_gbps;
  }
  return busbw;
}

CollectiveCost collective_cost(const NodeSpec& node, Collective op, const GroupPlacement& group,
                               double size_bytes) {
  CollectiveCost cost;
  if (group.size <= 1 || size_bytes <= 0) return cost;
  const bool inter = group.crosses_nodes();
  const double nodes = static_cast<double>(group.nodes);
  const double n = static_cast<double>(group.size);

  const CollectiveFit* fit = find_fit(node, op, inter, group.size, size_bytes);
  if (fit != nullptr) {
    cost.busbw_gbps = fit->busbw_gbps;
    cost.latency_s = fit->latency_us * kUs * (inter ? network_hops(op, nodes) : 1.0);
  } else if (!inter) {
    cost.busbw_gbps = intra_node_busbw_gbps(node, op, group.ranks_per_node, size_bytes);
    cost.latency_s = node.intra.latency_us * kUs;
  } else {
    // NICs this group can use while every GPU of the node runs a group like it.
    const double nics = std::max(static_cast<double>(node.inter.nics_per_node) * group.nic_share,
                                 1.0 / static_cast<double>(node.gpus_per_node));
    const double network_gbps = nics * node.nic_bandwidth_bytes_per_s() / kGB;
    double busbw = network_gbps;
    if (group.ranks_per_node > 1) {
      busbw = std::min(busbw, intra_node_busbw_gbps(node, op, group.ranks_per_node, size_bytes));
    }
    if (op == Collective::AllToAll) {
      // Of each GPU's (n-1)/n * S outgoing bytes, (n - k)/n leave the node over its NICs
      // and (k - 1)/n stay on the node fabric.
      const double k = static_cast<double>(group.ranks_per_node);
      const double per_gpu_network = network_gbps / k;
      const double t_network = (n - k) / n / per_gpu_network;
      const double t_local =
          k > 1 ? (k - 1) / n / intra_node_busbw_gbps(node, op, group.ranks_per_node, size_bytes)
                : 0.0;
      busbw = ((n - 1) / n) / std::max(t_network, t_local);
    } else if (op == Collective::SendRecv) {
      busbw = std::min(
          node.nic_bandwidth_bytes_per_s() / kGB,
          std::max(network_gbps / std::max(1.0, static_cast<double>(group.ranks_per_node)), 1e-3));
    }
    cost.busbw_gbps = busbw;
    cost.latency_s = node.inter.latency_us * kUs * network_hops(op, nodes);
  }
  const double factor = op == Collective::SendRecv ? 1.0 : bus_factor(op, group.size);
  cost.time_s = cost.latency_s + size_bytes * factor / gbps_to_bytes_per_s(cost.busbw_gbps);
  // All-gather and reduce-scatter have only the ring when a node holds several members
  // (PAT serves one rank per node; all-reduce uses trees with log2(nodes) latency): the
  // measured floor above or the ring's hop latencies, whichever is longer.
  if (inter && (op == Collective::AllGather || op == Collective::ReduceScatter) &&
      group.ranks_per_node > 1 && fit == nullptr) {
    cost.time_s =
        std::max(cost.time_s, ring_time_s(node, group, size_bytes * factor, cost.busbw_gbps));
  }
  return cost;
}

}  // namespace parplan::cost
