// core/gpu_assignment: node-local ranks and the GPU each rank uses.
#include "core/gpu_assignment.h"

#include <gtest/gtest.h>

#include <vector>

namespace parplan {
namespace {

std::vector<int> gpus(const std::vector<int>& host_of_rank, int device_count) {
  std::vector<int> out;
  for (int r = 0; r < static_cast<int>(host_of_rank.size()); ++r) {
    out.push_back(gpu_of_rank(node_local_rank(host_of_rank, r), device_count));
  }
  return out;
}

TEST(GpuAssignment, MapByNodeGivesEachRankOfAHostItsOwnGpu) {
  // mpirun --map-by node over 2 hosts of 2 GPUs: ranks alternate between the hosts.
  const std::vector<int> hosts = {0, 1, 0, 1};
  EXPECT_EQ(node_local_rank(hosts, 2), 1);
  EXPECT_EQ(node_local_rank(hosts, 3), 1);
  // By global rank modulo 2, ranks 0 and 2 (both on host 0) would share GPU 0.
  EXPECT_EQ(gpus(hosts, 2), (std::vector<int>{0, 0, 1, 1}));
}

TEST(GpuAssignment, MapBySlotNumbersEachHostFromZero) {
  const std::vector<int> hosts = {0, 0, 0, 0, 1, 1, 1, 1};
  EXPECT_EQ(gpus(hosts, 4), (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(gpus({7}, 8), std::vector<int>{0});
  // More ranks than GPUs: they share in turn.
  EXPECT_EQ(gpus({0, 0, 0}, 2), (std::vector<int>{0, 1, 0}));
}

}  // namespace
}  // namespace parplan
