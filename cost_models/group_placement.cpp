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

}  // namespace

GroupPlacement place_strided(int64_t size, int64_t stride, int64_t gpus_per_node) {
  GroupPlacement g;
  g.size = size;
  const int64_t per_node =
      stride >= gpus_per_node ? 1 : std::max<int64_t>(1, gpus_per_node / stride);
  g.ranks_per_node = std::min(size, per_node);
  g.nodes = (size + g.ranks_per_node - 1) / g.ranks_per_node;
  g.nic_share =
      std::min(1.0, static_cast<double>(g.ranks_per_node) / static_cast<double>(gpus_per_node));
  return g;
}

GroupPlacement place_group(const ParallelPlan& plan, const NodeSpec& node,
                           const std::vector<std::string>& dims) {
  const int64_t gpn = std::max<int64_t>(1, node.gpus_per_node);
  const bool expert_group = std::find(dims.begin(), dims.end(), "ep") != dims.end();
  GroupPlacement combined;
  combined.size = 1;
  combined.ranks_per_node = 1;
  if (expert_group) {
    // Megatron-Core expert grid: order tp-ep-dp-pp with tp = expert_tp.
    const GroupPlacement ep = place_strided(plan.ep, plan.expert_tp(), gpn);
    return ep;
  }
  int64_t stride = 1;
  for (const auto& name : split_order(plan.order)) {
    const int64_t size = dense_size(plan, name);
    if (std::find(dims.begin(), dims.end(), name) != dims.end() && size > 1) {
      const GroupPlacement g = place_strided(size, stride, gpn);
      combined.size *= size;
      // Members per node along independent dimensions multiply, up to the node size.
      combined.ranks_per_node = std::min(gpn, combined.ranks_per_node * g.ranks_per_node);
    }
    stride *= size;
  }
  combined.ranks_per_node = std::min(combined.ranks_per_node, combined.size);
  combined.nodes = (combined.size + combined.ranks_per_node - 1) / combined.ranks_per_node;
  combined.nic_share =
      std::min(1.0, static_cast<double>(combined.ranks_per_node) / static_cast<double>(gpn));
  return combined;
}

}  // namespace parplan::cost
