// Group placement against the rank grid itself (core/rank_grid.h): on small grids, aligned
// and not, place_group and place_strided report the worst group the grid holds, the one
// spanning the most nodes, then the one with the fewest members on its thinnest node.
#include "cost_models/group_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/rank_grid.h"

namespace parplan::cost {
namespace {

struct Worst {
  int64_t nodes = 0;
  int64_t thinnest = 0;
};

Worst worst_of(const std::vector<std::vector<int64_t>>& groups, int64_t gpus_per_node) {
  Worst w;
  for (const auto& group : groups) {
    std::map<int64_t, int64_t> per_node;
    for (int64_t rank : group) ++per_node[rank / gpus_per_node];
    int64_t thinnest = static_cast<int64_t>(group.size());
    for (const auto& [node, count] : per_node) thinnest = std::min(thinnest, count);
    const auto nodes = static_cast<int64_t>(per_node.size());
    if (nodes > w.nodes || (nodes == w.nodes && thinnest < w.thinnest)) w = {nodes, thinnest};
  }
  return w;
}

TEST(GroupPlacement, MatchesTheRankGridsWorstGroup) {
  const std::vector<std::string> orders = {"tp-cp-ep-dp-pp", "tp-cp-pp-dp", "tp-dp-pp", "tp-pp-dp"};
  const std::vector<std::vector<std::string>> dim_sets = {
      {"tp"}, {"cp"}, {"dp"}, {"pp"}, {"dp", "cp"}};
  int checked = 0, uneven = 0;
  for (int64_t gpn : {1, 2, 3, 4, 6, 8}) {
    NodeSpec node;
    node.gpus_per_node = gpn;
    for (const auto& order : orders) {
      for (int64_t tp : {1, 2, 3, 4, 6}) {
        for (int64_t cp : {1, 2, 3}) {
          if (order.find("cp") == std::string::npos && cp > 1) continue;
          for (int64_t pp : {1, 2, 3, 4}) {
            for (int64_t dp : {1, 2, 3, 5}) {
              ParallelPlan plan;
              plan.tp = tp;
              plan.cp = cp;
              plan.pp = pp;
              plan.dp = dp;
              plan.order = order;
              const RankGrid grid =
                  RankGrid::from_order(order, {{"tp", tp}, {"cp", cp}, {"dp", dp}, {"pp", pp}});
              // Ranks fill the job's nodes evenly where the count divides.
              const int64_t filled = gpus_per_node_filled(gpn, grid.world_size());
              for (const auto& dims : dim_sets) {
                const GroupPlacement got = place_group(plan, node, dims);
                const Worst want = worst_of(grid.groups(dims), filled);
                SCOPED_TRACE(order + " tp" + std::to_string(tp) + " cp" + std::to_string(cp) +
                             " pp" + std::to_string(pp) + " dp" + std::to_string(dp) + " gpn" +
                             std::to_string(gpn) + " group " + dims.front() +
                             (dims.size() > 1 ? "+" + dims.back() : ""));
                ASSERT_EQ(got.nodes, want.nodes);
                ASSERT_EQ(got.ranks_per_node, want.thinnest);
                ASSERT_EQ(got.size, static_cast<int64_t>(grid.groups(dims).front().size()));
                ASSERT_DOUBLE_EQ(got.nic_share, std::min(1.0, static_cast<double>(want.thinnest) /
                                                                  static_cast<double>(gpn)));
                ++checked;
                if (want.nodes * want.thinnest != got.size) ++uneven;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 5000);
  EXPECT_GT(uneven, 100);  // the grids include groups that node boundaries cut unevenly
}

TEST(GroupPlacement, StridedGroupsMatchTheGridAroundThem) {
  // place_strided knows only its own axis: ranks below the stride and enough blocks above it
  // to reach every offset inside a node.
  for (int64_t gpn : {2, 4, 6, 8, 72}) {
    for (int64_t stride : {1, 2, 3, 4, 5, 8, 12}) {
      for (int64_t size : {2, 3, 4, 6, 9}) {
        const RankGrid grid({{"below", stride}, {"axis", size}, {"above", gpn}});
        const Worst want = worst_of(grid.groups({"axis"}), gpn);
        const GroupPlacement got = place_strided(size, stride, gpn);
        SCOPED_TRACE("gpn " + std::to_string(gpn) + " stride " + std::to_string(stride) + " size " +
                     std::to_string(size));
        EXPECT_EQ(got.nodes, want.nodes);
        EXPECT_EQ(got.ranks_per_node, want.thinnest);
      }
    }
  }
}

TEST(GroupPlacement, JobsSpreadEvenlyOverTheFewestNodes) {
  EXPECT_EQ(gpus_per_node_filled(8, 16), 8);
  EXPECT_EQ(gpus_per_node_filled(8, 4), 4);      // part of one node
  EXPECT_EQ(gpus_per_node_filled(72, 256), 64);  // 4 NVL72 racks of 64
  EXPECT_EQ(gpus_per_node_filled(72, 4608), 72);
  EXPECT_EQ(gpus_per_node_filled(8, 12), 6);  // 2 nodes of 6
  EXPECT_EQ(gpus_per_node_filled(8, 20), 8);  // 3 nodes do not divide 20: 8 + 8 + 4
  // 256 GPUs on NVL72 racks: a 64-way data-parallel group stays inside one rack.
  NodeSpec rack;
  rack.gpus_per_node = 72;
  ParallelPlan plan;
  plan.dp = 64;
  plan.pp = 4;
  const GroupPlacement dp = place_group(plan, rack, {"dp"});
  EXPECT_EQ(dp.nodes, 1);
  EXPECT_EQ(dp.ranks_per_node, 64);
  EXPECT_DOUBLE_EQ(dp.nic_share, 64.0 / 72.0);  // the NICs of the 64 GPUs it uses
}

TEST(GroupPlacement, ThreeWayTensorParallelismOnEightGpuNodesCrossesANode) {
  NodeSpec node;
  node.gpus_per_node = 8;
  ParallelPlan plan;
  plan.tp = 3;
  plan.dp = 8;  // 24 GPUs: tp groups [0,1,2] ... [6,7 | 8] ... [15 | 16,17] ...
  const GroupPlacement tp = place_group(plan, node, {"tp"});
  EXPECT_EQ(tp.nodes, 2);
  EXPECT_EQ(tp.ranks_per_node, 1);
  plan.tp = 4;  // two groups per node, none crosses
  EXPECT_EQ(place_group(plan, node, {"tp"}).nodes, 1);
  EXPECT_EQ(place_group(plan, node, {"tp"}).ranks_per_node, 4);
}

}  // namespace
}  // namespace parplan::cost
