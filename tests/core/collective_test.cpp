// nccl-tests bandwidth conventions (core/collective.h, nccl-tests doc/PERFORMANCE.md).
#include "core/collective.h"

#include <gtest/gtest.h>

namespace parplan {
namespace {

TEST(Collective, BusFactorsOfNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::AllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::AllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::ReduceScatter, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::AllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::SendRecv, 2), 1.0);
  // One rank moves nothing.
  EXPECT_DOUBLE_EQ(bus_factor(Collective::AllReduce, 1), 0.0);
}

TEST(Collective, TimeIsLatencyPlusBusBytesOverBusBandwidth) {
  // 1 GB all-reduce over 8 ranks at 200 GB/s busbw after 20 us: 20e-6 + 1e9 * 1.75 / 200e9.
  EXPECT_NEAR(collective_time_s(Collective::AllReduce, 8, 1e9, 20, 200), 20e-6 + 1.75 / 200, 1e-12);
  EXPECT_NEAR(collective_time_s(Collective::SendRecv, 2, 1e6, 5, 25), 5e-6 + 1e6 / 25e9, 1e-15);
}

TEST(Collective, NamesRoundTrip) {
  for (int i = 0; i < kNumCollectives; ++i) {
    const auto op = static_cast<Collective>(i);
    const auto parsed = parse_collective(to_string(op));
    ASSERT_TRUE(parsed.has_value()) << to_string(op);
    EXPECT_EQ(*parsed, op);
  }
  EXPECT_EQ(std::string(to_string(Collective::AllReduce)), "all_reduce");
  EXPECT_FALSE(parse_collective("allreduce").has_value());
}

}  // namespace
}  // namespace parplan
