#include "core/gpu_assignment.h"

#include <algorithm>

#include "core/check.h"

namespace parplan {

int node_local_rank(const std::vector<int>& host_of_rank, int rank) {
  PARPLAN_ASSERT(rank >= 0 && rank < static_cast<int>(host_of_rank.size()));
  const int host = host_of_rank[static_cast<std::size_t>(rank)];
  return static_cast<int>(std::count(host_of_rank.begin(), host_of_rank.begin() + rank, host));
}

int gpu_of_rank(int node_local_rank, int device_count) {
  PARPLAN_ASSERT(node_local_rank >= 0 && device_count > 0);
  return node_local_rank % device_count;
}

}  // namespace parplan
