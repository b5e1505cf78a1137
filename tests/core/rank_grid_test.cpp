#include "core/rank_grid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace parplan {
namespace {

TEST(RankGrid, MegatronDocstringExample) {
  // Megatron-LM parallel_state: order tp-dp-pp with sizes 2-2-2.
  const RankGrid g = RankGrid::from_order("tp-dp-pp", {{"tp", 2}, {"dp", 2}, {"pp", 2}});
  using Groups = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(g.groups({"tp"}), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(g.groups({"dp"}), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(g.groups({"pp"}), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

// Oracle: enumerate every coordinate with nested loops and compare.
TEST(RankGrid, MatchesNaiveNestedLoopForAllSmallShapes) {
  const std::vector<std::string> orders = {"tp-cp-dp-pp", "tp-pp-dp-cp", "pp-dp-cp-tp"};
  for (const auto& order : orders) {
    for (int64_t tp : {1, 2, 4}) {
      for (int64_t cp : {1, 2}) {
        for (int64_t dp : {1, 2, 3}) {
          for (int64_t pp : {1, 2, 4}) {
            const RankGrid g =
                RankGrid::from_order(order, {{"tp", tp}, {"cp", cp}, {"dp", dp}, {"pp", pp}});
            ASSERT_EQ(g.world_size(), tp * cp * dp * pp);
            // Naive: rank = sum coord_i * prod(size_j, j < i) in the order given.
            std::set<int64_t> seen;
            for (int64_t r = 0; r < g.world_size(); ++r) {
              const auto c = g.coords(r);
              EXPECT_EQ(g.rank(c), r);
              seen.insert(r);
              int64_t rebuilt = 0, stride = 1;
              for (std::size_t i = 0; i < g.dims().size(); ++i) {
                rebuilt += c[i] * stride;
                stride *= g.dims()[i].size;
              }
              EXPECT_EQ(rebuilt, r);
              // Members of r's dp group differ only in dp.
              for (int64_t member : g.group_of(r, {"dp"})) {
                EXPECT_EQ(g.coord(member, "tp"), g.coord(r, "tp"));
                EXPECT_EQ(g.coord(member, "pp"), g.coord(r, "pp"));
                EXPECT_EQ(g.coord(member, "cp"), g.coord(r, "cp"));
              }
              EXPECT_EQ(static_cast<int64_t>(g.group_of(r, {"dp", "cp"}).size()), dp * cp);
            }
            // Groups partition the ranks.
            int64_t covered = 0;
            for (const auto& group : g.groups({"tp"}))
              covered += static_cast<int64_t>(group.size());
            EXPECT_EQ(covered, g.world_size());
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace parplan
