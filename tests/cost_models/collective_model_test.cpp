// Collective costs against closed forms: NCCL's ring hop latencies for all-gather and
// reduce-scatter over many nodes (src/graph/tuning.cc; docs/sources/hardware_notes.md §6).
#include "cost_models/collective_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/presets.h"

namespace parplan::cost {
namespace {

TEST(CollectiveModel, RingAllGatherOverManyNodesPaysEveryHop) {
  const NodeSpec node = *find_node_preset("dgx-a100-80gb");
  const GroupPlacement group = place_strided(1536, 1, 8);  // 192 nodes x 8 GPUs
  ASSERT_EQ(group.nodes, 192);
  const double n = 1536, nodes = 192;
  const double factor = (n - 1) / n;
  const CollectiveCost small = collective_cost(node, Collective::AllGather, group, 1e6);
  // DGX A100 hosts are AMD: with several nodes every ring step inside a node costs at least
  // NCCL's 2 us network overhead (6 us for Simple), and LL's bus bandwidth is capped at 19 GB/s
  // over more than two nodes (llMaxBws, AMD row).
  // 1 MB: the low-latency protocol wins: 6.6 us + 1344 NVLink hops x max(0.6, 2) + 191
  // network hops x 2.7, at half the bus bandwidth capped at 19 GB/s.
  const double ll_gbps = std::min(0.5 * small.busbw_gbps, 19.0);
  const double ll =
      (6.6 + (n - nodes) * 2.0 + (nodes - 1) * 2.7) * 1e-6 + 1e6 * factor / (ll_gbps * 1e9);
  EXPECT_NEAR(small.time_s, ll, 1e-9);
  // 100 MB (a DeepSpeed ZeRO-3 prefetch bucket of 5e7 fp16 parameters): LL128, 14 us + 1344
  // x max(1.9, 2) + 191 x 4.0 at 0.92 of the bus bandwidth; LL's 19 GB/s would take 5.3 ms for
  // the bytes alone, Simple's hops 10.7 ms.
  const double ll128 = (14.0 + (n - nodes) * 2.0 + (nodes - 1) * 4.0) * 1e-6 +
                       1e8 * factor / (0.92 * small.busbw_gbps * 1e9);
  EXPECT_NEAR(collective_cost(node, Collective::AllGather, group, 1e8).time_s, ll128, 1e-9);
  // 40 GB: Simple, 8.4 us + 1344 x max(3.4, 6) + 191 x 14, at the full bus bandwidth.
  const double simple = (8.4 + (n - nodes) * 6.0 + (nodes - 1) * 14.0) * 1e-6 +
                        4e10 * factor / (small.busbw_gbps * 1e9);
  EXPECT_NEAR(collective_cost(node, Collective::ReduceScatter, group, 4e10).time_s, simple, 1e-9);
  // All-reduce runs as a tree: the measured floor times log2(nodes), no per-hop ring term.
  const CollectiveCost ar = collective_cost(node, Collective::AllReduce, group, 1e6);
  EXPECT_NEAR(ar.latency_s, node.inter.latency_us * 1e-6 * std::log2(nodes), 1e-12);
  EXPECT_LT(ar.time_s, small.time_s);
}

// NCCL caps LL by host CPU vendor across nodes, not by GPU (src/graph/tuning.cc llMaxBws):
// a DGX H100 has Intel hosts, so over more than two nodes LL moves at most 20.4 GB/s (Hopper's
// own row, 35, applies to one node only), and each step inside a node costs at least 1 us.
TEST(CollectiveModel, LowLatencyCapFollowsTheHostCpuAcrossNodes) {
  NodeSpec node = *find_node_preset("dgx-h100");
  ASSERT_EQ(node.host_cpu_vendor, "intel");
  const GroupPlacement group = place_strided(512, 1, 8);  // 64 nodes x 8 GPUs
  const double n = 512, nodes = 64, bytes = 4e6;
  const double factor = (n - 1) / n;
  // 4 MB: LL, 6.6 us + 448 x max(0.6, 1) + 63 x 2.7 and the bytes at 20.4 GB/s (about 0.82
  // ms); LL128's hops alone take 1.1 ms, Simple's 2.4 ms.
  const double ll =
      (6.6 + (n - nodes) * 1.0 + (nodes - 1) * 2.7) * 1e-6 + bytes * factor / (20.4 * 1e9);
  EXPECT_NEAR(collective_cost(node, Collective::AllGather, group, bytes).time_s, ll, 1e-9);
  // The same GPUs behind AMD hosts: NCCL's AMD row (19.0 GB/s) and a 2 us overhead per step
  // inside a node make LL (about 1.28 ms) slower than LL128 (1.17 ms): 14 us + 448 x max(1.9,
  // 2) + 63 x 4.0 at 0.92 of the bus bandwidth.
  node.host_cpu_vendor = "amd";
  const CollectiveCost amd = collective_cost(node, Collective::AllGather, group, bytes);
  const double ll_amd =
      (6.6 + (n - nodes) * 2.0 + (nodes - 1) * 2.7) * 1e-6 + bytes * factor / (19.0 * 1e9);
  const double ll128_amd = (14.0 + (n - nodes) * 2.0 + (nodes - 1) * 4.0) * 1e-6 +
                           bytes * factor / (0.92 * amd.busbw_gbps * 1e9);
  EXPECT_LT(ll128_amd, ll_amd);
  EXPECT_NEAR(amd.time_s, ll128_amd, 1e-9);
}

// Over PCIe NCCL runs no LL128 (intra path above NVB), and other vendors' libraries have no
// LL cap of NCCL's: the ring time is then the faster of Simple and an uncapped LL.
TEST(CollectiveModel, NoLowLatency128OverPcieAndNoCapForOtherVendors) {
  const NodeSpec pcie = *find_node_preset("pcie-8x-h100-nvl");
  const GroupPlacement group = place_strided(512, 1, 8);
  const double n = 512, nodes = 64, bytes = 1e8;
  const CollectiveCost c = collective_cost(pcie, Collective::AllGather, group, bytes);
  const double factor = (n - 1) / n;
  const double simple =
      (8.4 + (n - nodes) * 5.7 + (nodes - 1) * 14.0) * 1e-6 + bytes * factor / (c.busbw_gbps * 1e9);
  const double ll = (6.6 + (n - nodes) * 1.0 + (nodes - 1) * 2.7) * 1e-6 +
                    bytes * factor / (std::min(0.5 * c.busbw_gbps, 20.4) * 1e9);
  EXPECT_NEAR(c.time_s,
              std::max(std::min(simple, ll), c.latency_s + bytes * factor / (c.busbw_gbps * 1e9)),
              1e-9);
  NodeSpec other = *find_node_preset("dgx-h100");
  other.gpu.vendor = "other";
  const CollectiveCost o = collective_cost(other, Collective::AllGather, group, 4e6);
  const double uncapped = (6.6 + (n - nodes) * 1.0 + (nodes - 1) * 2.7) * 1e-6 +
                          4e6 * factor / (0.5 * o.busbw_gbps * 1e9);
  EXPECT_NEAR(o.time_s, std::max(uncapped, o.latency_s + 4e6 * factor / (o.busbw_gbps * 1e9)),
              1e-9);
}

// The Jean Zay presets carry, in an all-reduce over 4 of their nodes, the 84.6 Gb/s of busbw
// that NCCL 2.10.3 carried per node on Jean Zay's Omni-Path network: 4 GB fp32 over 16 V100s on
// 4 nodes, 4 channels (BigScience experiments/bandwidth/all_reduce_bench-32gb-n4.txt), the
// benchmark jean-zay-v100-32gb repeats exactly; the A100 nodes' own run of it built 2 channels
// and reached half of it (40.5 Gb/s, all_reduce_bench-a100-n4.txt).
TEST(CollectiveModel, JeanZayPresetsCarryTheMeasuredNodeBandwidth) {
  for (const char* name : {"jean-zay-v100-32gb", "jean-zay-a100-80gb"}) {
    SCOPED_TRACE(name);
    const auto node = find_node_preset(name);
    ASSERT_TRUE(node.has_value());
    const int64_t ranks = 4 * node->gpus_per_node;
    const GroupPlacement group = place_strided(ranks, 1, node->gpus_per_node);
    ASSERT_EQ(group.nodes, 4);
    const double bytes = 500000.0 * 2000.0 * 4.0;  // all_reduce_bench.py: N x M fp32
    const CollectiveCost c = collective_cost(*node, Collective::AllReduce, group, bytes);
    const double measured_gb_per_s = 84.6 / 8.0;
    EXPECT_NEAR(c.busbw_gbps, measured_gb_per_s, 0.01 * measured_gb_per_s);
    // The benchmark's busbw: size / time x 2 (n - 1) / n.
    const double n = static_cast<double>(ranks);
    const double time_s = bytes * 2.0 * (n - 1) / n / (measured_gb_per_s * 1e9);
    EXPECT_NEAR(c.time_s, time_s, 0.02 * time_s);
    EXPECT_GT(c.busbw_gbps, 40.5 / 8.0);  // one 2-channel communicator of 8 GPUs per node
  }
}

// Inside a Jean Zay V100 node, BigScience's all-reduce benchmark (4 GB fp32 over the 4 GPUs)
// measured 989-1003 Gb/s of busbw in its steady trials (experiments/bandwidth/
// n1_32gb_all_reduce_bench.txt): each trial took about 4 GB x 2 x 3/4 / 123.8 GB/s = 48.5 ms.
TEST(CollectiveModel, JeanZayV100NodeCarriesItsMeasuredNvlinkAllReduce) {
  const auto node = find_node_preset("jean-zay-v100-32gb");
  ASSERT_TRUE(node.has_value());
  const GroupPlacement group = place_strided(4, 1, 4);
  ASSERT_EQ(group.nodes, 1);
  const double bytes = 500000.0 * 2000.0 * 4.0;
  const double measured_busbw_gb_per_s = 990.0 / 8.0;
  const double measured_s = bytes * 2.0 * 3.0 / 4.0 / (measured_busbw_gb_per_s * 1e9);
  const CollectiveCost c = collective_cost(*node, Collective::AllReduce, group, bytes);
  EXPECT_NEAR(c.time_s, measured_s, 0.02 * measured_s);
}

TEST(CollectiveModel, InsideOneNodeOrOneRankPerNodeKeepsTheMeasuredFloor) {
  const NodeSpec node = *find_node_preset("dgx-h100");
  const GroupPlacement intra = place_strided(8, 1, 8);
  const CollectiveCost c = collective_cost(node, Collective::AllGather, intra, 1e6);
  EXPECT_NEAR(c.time_s, node.intra.latency_us * 1e-6 + 1e6 * 7.0 / 8.0 / (c.busbw_gbps * 1e9),
              1e-12);
  // One member per node (a dp group strided by tp*cp*pp = 8): no intra-node hops.
  const GroupPlacement strided = place_strided(4, 8, 8);
  ASSERT_EQ(strided.ranks_per_node, 1);
  const CollectiveCost s = collective_cost(node, Collective::AllGather, strided, 1e6);
  EXPECT_NEAR(s.time_s, s.latency_s + 1e6 * 3.0 / 4.0 / (s.busbw_gbps * 1e9), 1e-12);
}

}  // namespace
}  // namespace parplan::cost
