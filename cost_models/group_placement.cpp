#include "cost_models/group_placement.h"

#include <algorithm>

namespace parplan::cost {

namespace {

std::vector<std::string> split_order(const std::string& order) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= order.size()) {
    const std::size_t end = std::min(order.find('-', start), order.size());
    out.push_back(order.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int64_t dense_size(const ParallelPlan& p, const std::string& dim) {
  if (dim == "tp") return p.tp;
  if (dim == "cp") return p.cp;
  if (dim == "dp") return p.dp;
  if (dim == "pp") return p.pp;
  return 1;  // ep lives inside dp*cp in the dense grid
}

// One dimension of the rank grid: members of a group along it sit `stride` ranks apart.
struct Axis {
  int64_t stride;
  int64_t size;
};

// Every group along this axis has the same members per node: either no two members share a
// node (stride of a node or more), or the axis's blocks of stride*size ranks tile the nodes
// (a block inside one node, or whole nodes per block). Ranks of slower dimensions shift a
// group by multiples of the block, so the tiling holds for every group.
bool aligned_with_nodes(const Axis& a, int64_t gpus_per_node) {
  if (a.size <= 1 || a.stride >= gpus_per_node) return true;
  if (gpus_per_node % a.stride != 0) return false;
  const int64_t block = a.stride * a.size;
  return gpus_per_node % block == 0 || block % gpus_per_node == 0;
}

// Members per node of every group along an aligned axis.
int64_t aligned_ranks_per_node(const Axis& a, int64_t gpus_per_node) {
  if (a.stride >= gpus_per_node) return 1;
  return std::min(a.size, std::max<int64_t>(1, gpus_per_node / a.stride));
}

// Share of a node's NICs that a group with `ranks_per_node` members there can use.
double nic_share_of(int64_t ranks_per_node, int64_t node_gpus) {
  return std::min(1.0, static_cast<double>(ranks_per_node) / static_cast<double>(node_gpus));
}

// The worst group when node boundaries cut some groups unevenly (tp = 3 on 8-GPU nodes:
// ranks 6, 7 | 8): the one spanning the most nodes, then the one with the fewest members on
// its thinnest node (its fewest NICs). A group's layout depends only on where its first rank
// falls inside a node, so the first ranks' residues modulo the node size are enumerated
// (`across`: the other axes, whose offsets place the groups), then each residue's group.
GroupPlacement worst_group(const std::vector<Axis>& within, const std::vector<Axis>& across,
                           int64_t gpus_per_node, int64_t node_gpus) {
  const int64_t gpn = gpus_per_node;
  std::vector<char> residues(gpn, 0);
  residues[0] = 1;
  for (const Axis& a : across) {
    std::vector<char> next(gpn, 0);
    // c * stride modulo gpn repeats within gpn steps.
    const int64_t steps = std::min(a.size, gpn);
    for (int64_t r = 0; r < gpn; ++r) {
      if (!residues[r]) continue;
      for (int64_t c = 0; c < steps; ++c) next[(r + c * (a.stride % gpn)) % gpn] = 1;
    }
    residues.swap(next);
  }
  std::vector<int64_t> offsets = {0};
  for (const Axis& a : within) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<std::size_t>(a.size));
    for (int64_t o : offsets) {
      for (int64_t c = 0; c < a.size; ++c) next.push_back(o + c * a.stride);
    }
    offsets.swap(next);
  }
  std::sort(offsets.begin(), offsets.end());

  GroupPlacement worst;
  worst.size = static_cast<int64_t>(offsets.size());
  worst.nodes = 0;
  for (int64_t r = 0; r < gpn; ++r) {
    if (!residues[r]) continue;
    int64_t nodes = 0;
    int64_t thinnest = worst.size;
    int64_t run = 0;
    int64_t node = -1;
    for (int64_t o : offsets) {
      const int64_t n = (r + o) / gpn;
      if (n != node) {
        if (run > 0) thinnest = std::min(thinnest, run);
        ++nodes;
        node = n;
        run = 0;
      }
      ++run;
    }
    thinnest = std::min(thinnest, run);
    if (nodes > worst.nodes || (nodes == worst.nodes && thinnest < worst.ranks_per_node)) {
      worst.nodes = nodes;
      worst.ranks_per_node = thinnest;
    }
  }
  worst.nic_share = nic_share_of(worst.ranks_per_node, node_gpus);
  return worst;
}

// Members along one axis when every node holds `gpn` ranks of the job and has `node_gpus`
// GPUs (and their NICs).
GroupPlacement strided(int64_t size, int64_t stride, int64_t gpn, int64_t node_gpus) {
  const Axis axis{stride, size};
  if (!aligned_with_nodes(axis, gpn)) {
    // The ranks below the stride and the blocks above it place the groups.
    return worst_group({axis}, {{1, stride}, {stride * size, gpn}}, gpn, node_gpus);
  }
  GroupPlacement g;
  g.size = size;
  g.ranks_per_node = aligned_ranks_per_node(axis, gpn);
  g.nodes = (size + g.ranks_per_node - 1) / g.ranks_per_node;
  g.nic_share = nic_share_of(g.ranks_per_node, node_gpus);
  return g;
}

}  // namespace

int64_t gpus_per_node_filled(int64_t gpus_per_node, int64_t job_gpus) {
  const int64_t gpn = std::max<int64_t>(1, gpus_per_node);
  if (job_gpus <= gpn) return std::max<int64_t>(1, job_gpus);
  const int64_t nodes = (job_gpus + gpn - 1) / gpn;
  return job_gpus % nodes == 0 ? job_gpus / nodes : gpn;
}

GroupPlacement place_strided(int64_t size, int64_t stride, int64_t gpus_per_node) {
  const int64_t gpn = std::max<int64_t>(1, gpus_per_node);
  return strided(size, stride, gpn, gpn);
}

GroupPlacement place_strided(int64_t size, int64_t stride, const NodeSpec& node, int64_t job_gpus) {
  const int64_t node_gpus = std::max<int64_t>(1, node.gpus_per_node);
  return strided(size, stride, gpus_per_node_filled(node_gpus, job_gpus), node_gpus);
}

GroupPlacement place_group(const ParallelPlan& plan, const NodeSpec& node,
                           const std::vector<std::string>& dims) {
  const int64_t node_gpus = std::max<int64_t>(1, node.gpus_per_node);
  const int64_t gpn = gpus_per_node_filled(node_gpus, plan.num_gpus());
  const bool expert_group = std::find(dims.begin(), dims.end(), "ep") != dims.end();
  if (expert_group) {
    // Megatron-Core expert grid: order tp-ep-dp-pp with tp = expert_tp.
    return strided(plan.ep, plan.expert_tp(), gpn, node_gpus);
  }
  GroupPlacement combined;
  combined.size = 1;
  combined.ranks_per_node = 1;
  bool aligned = true;
  int64_t stride = 1;
  const std::vector<std::string> order = split_order(plan.order);
  for (const auto& name : order) {
    const int64_t size = dense_size(plan, name);
    if (size > 1 && std::find(dims.begin(), dims.end(), name) != dims.end()) {
      const Axis axis{stride, size};
      aligned = aligned && aligned_with_nodes(axis, gpn);
      combined.size *= size;
      // Members per node along independent dimensions multiply, up to the node size.
      combined.ranks_per_node =
          std::min(gpn, combined.ranks_per_node * aligned_ranks_per_node(axis, gpn));
    }
    stride *= size;
  }
  if (!aligned) {
    std::vector<Axis> within, across;
    stride = 1;
    for (const auto& name : order) {
      const int64_t size = dense_size(plan, name);
      if (size > 1) {
        const bool member = std::find(dims.begin(), dims.end(), name) != dims.end();
        (member ? within : across).push_back({stride, size});
      }
      stride *= size;
    }
    return worst_group(within, across, gpn, node_gpus);
  }
  combined.ranks_per_node = std::min(combined.ranks_per_node, combined.size);
  combined.nodes = (combined.size + combined.ranks_per_node - 1) / combined.ranks_per_node;
  combined.nic_share = nic_share_of(combined.ranks_per_node, node_gpus);
  return combined;
}

}  // namespace parplan::cost
