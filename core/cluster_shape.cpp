#include "core/cluster_shape.h"

namespace parplan {

namespace {

std::string str(int64_t n) { return std::to_string(n); }

// The GPUs a node has, whether or not the job uses all of them.
int64_t installed_gpus(const ClusterSpec& cluster) {
  return cluster.installed_gpus_per_node > 0 ? cluster.installed_gpus_per_node
                                             : cluster.node.gpus_per_node;
}

}  // namespace

int64_t power_of_two_floor(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

std::string cluster_shape_text(const ClusterSpec& cluster) {
  const int64_t per_node = cluster.node.gpus_per_node;
  const std::string& name = cluster.node.name;
  const std::string gpus =
      " (" + str(cluster.num_gpus) + (cluster.num_gpus == 1 ? " GPU)" : " GPUs)");
  const int64_t full = cluster.num_gpus / per_node;
  const int64_t rest = cluster.num_gpus % per_node;
  if (rest == 0) {
    const std::string used =
        installed_gpus(cluster) != per_node
            ? " using " + str(per_node) + " of " + str(installed_gpus(cluster)) + " GPUs each"
            : "";
    return str(full) + " x " + name + used + gpus;
  }
  if (full == 0) return "1 x " + name + gpus;  // part of one node
  return str(full) + " full " + name + (full == 1 ? " node" : " nodes") + " + " + str(rest) +
         (rest == 1 ? " GPU" : " GPUs") + gpus;
}

std::optional<std::string> partial_node_warning(const ClusterSpec& cluster) {
  const int64_t per_node = cluster.node.gpus_per_node;
  const int64_t full = cluster.num_gpus / per_node;
  const int64_t rest = cluster.num_gpus % per_node;
  if (rest == 0 || full == 0) return std::nullopt;
  std::string text =
      str(cluster.num_gpus) + " GPUs are " + str(full) + " full " + cluster.node.name +
      (full == 1 ? " node" : " nodes") + " + " + str(rest) + (rest == 1 ? " GPU" : " GPUs") +
      " on one more node; the prediction takes them as given (one partial node): if whole nodes "
      "are meant, give num_nodes " +
      str(full) + " (" + str(full * per_node) + " GPUs) or " + str(full + 1) + " (" +
      str((full + 1) * per_node) + " GPUs)";
  const int64_t used = power_of_two_floor(per_node);
  if (used != per_node && cluster.num_gpus % used == 0) {
    text += ", or " + str(cluster.num_gpus / used) + " nodes using " + str(used) + " of their " +
            str(per_node) + " GPUs each (cluster.gpus_used_per_node " + str(used) + ")";
  }
  return text;
}

std::optional<std::string> power_of_two_layout_hint(const ClusterSpec& cluster) {
  const int64_t per_node = installed_gpus(cluster);
  const int64_t used = power_of_two_floor(per_node);
  if (used == per_node || cluster.node.gpus_per_node == used) return std::nullopt;
  const int64_t nodes = (cluster.num_gpus + per_node - 1) / per_node;
  return "the common layout on " + cluster.node.name + " uses " + str(used) + " of each node's " +
         str(per_node) + " GPUs (cluster.gpus_used_per_node " + str(used) + "; the rest are " +
         "spares): num_nodes " + str(nodes) + " then gives " + str(nodes * used) + " GPUs";
}

}  // namespace parplan
