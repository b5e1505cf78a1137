// Unit tests of the collective group layouts for several rank -> host maps.
#include "profiler/collective_groups.h"

#include <gtest/gtest.h>

namespace parplan::profiler {
namespace {

TEST(CollectiveGroups, OneHostFourRanks) {
  const auto layouts = collective_group_layouts({0, 0, 0, 0});
  ASSERT_EQ(layouts.size(), 2u);
  EXPECT_EQ(layouts[0].group_size, 2);
  EXPECT_EQ(layouts[0].span, "intra_node");
  EXPECT_EQ(layouts[0].color, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(layouts[0].key, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(layouts[1].group_size, 4);
  EXPECT_EQ(layouts[1].span, "intra_node");
}

TEST(CollectiveGroups, TwoHostsTwoRanksEach) {
  const auto layouts = collective_group_layouts({0, 0, 1, 1});
  ASSERT_EQ(layouts.size(), 3u);
  // One rank per host: local rank 0 of both hosts, local rank 1 of both hosts.
  EXPECT_EQ(layouts[0].group_size, 2);
  EXPECT_EQ(layouts[0].span, "inter_node");
  EXPECT_EQ(layouts[0].color, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(layouts[0].key, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(layouts[1].group_size, 2);
  EXPECT_EQ(layouts[1].span, "intra_node");
  EXPECT_EQ(layouts[1].color, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(layouts[2].group_size, 4);
  EXPECT_EQ(layouts[2].span, "inter_node");
}

TEST(CollectiveGroups, OddWorldAndSingleRank) {
  const auto layouts = collective_group_layouts({0, 0, 0});
  ASSERT_EQ(layouts.size(), 2u);
  EXPECT_EQ(layouts[0].color, (std::vector<int>{0, 0, -1}));  // rank 2 sits out
  EXPECT_EQ(layouts[1].group_size, 3);
  EXPECT_TRUE(collective_group_layouts({0}).empty());
}

TEST(CollectiveGroups, UnevenHostsKeepOnlyCompleteStridedGroups) {
  const auto layouts = collective_group_layouts({0, 0, 0, 1});
  ASSERT_EQ(layouts.size(), 2u);  // (2, inter_node) strided, (4, inter_node)
  const auto& strided = layouts.front();
  EXPECT_EQ(strided.group_size, 2);
  EXPECT_EQ(strided.span, "inter_node");
  EXPECT_EQ(strided.color, (std::vector<int>{0, -1, -1, 0}));
}

}  // namespace
}  // namespace parplan::profiler
