#include "core/cluster_shape.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "core/job.h"

namespace parplan {
namespace {

ClusterSpec cluster_of(const std::string& cluster_json) {
  const std::string text = R"({"model": "llama3.1-8b", "cluster": )" + cluster_json +
                           R"(, "training": {"global_batch_size": 64, "seq_length": 4096}})";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Skip).cluster;
}

TEST(ClusterShape, WholeAndPartialNodes) {
  EXPECT_EQ(cluster_shape_text(cluster_of(R"({"node": "dgx-h100", "num_nodes": 32})")),
            "32 x dgx-h100 (256 GPUs)");
  EXPECT_EQ(cluster_shape_text(cluster_of(R"({"node": "dgx-h100", "num_gpus": 100})")),
            "12 full dgx-h100 nodes + 4 GPUs (100 GPUs)");
  EXPECT_EQ(cluster_shape_text(cluster_of(R"({"node": "dgx-h100", "num_gpus": 9})")),
            "1 full dgx-h100 node + 1 GPU (9 GPUs)");
  EXPECT_EQ(cluster_shape_text(cluster_of(R"({"node": "dgx-h100", "num_gpus": 4})")),
            "1 x dgx-h100 (4 GPUs)");
  EXPECT_EQ(cluster_shape_text(
                cluster_of(R"({"node": "gb200-nvl72", "num_nodes": 4, "gpus_used_per_node": 64})")),
            "4 x gb200-nvl72 using 64 of 72 GPUs each (256 GPUs)");
}

TEST(ClusterShape, PartialNodeWarningAsksAndOffersWholeNodes) {
  const auto warning = partial_node_warning(cluster_of(R"({"node": "dgx-h100", "num_gpus": 100})"));
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(*warning,
            "100 GPUs are 12 full dgx-h100 nodes + 4 GPUs on one more node; the prediction takes "
            "them as given (one partial node): if whole nodes are meant, give num_nodes 12 (96 "
            "GPUs) or 13 (104 GPUs)");
  EXPECT_FALSE(partial_node_warning(cluster_of(R"({"node": "dgx-h100", "num_gpus": 96})")));
  EXPECT_FALSE(partial_node_warning(cluster_of(R"({"node": "dgx-h100", "num_gpus": 4})")));
  const auto nvl =
      partial_node_warning(cluster_of(R"({"node": "gb200-nvl72", "num_gpus": 16384})"));
  ASSERT_TRUE(nvl.has_value());
  EXPECT_NE(nvl->find("227 full gb200-nvl72 nodes + 40 GPUs"), std::string::npos) << *nvl;
  EXPECT_NE(nvl->find("or 256 nodes using 64 of their 72 GPUs each (cluster.gpus_used_per_node "
                      "64)"),
            std::string::npos)
      << *nvl;
}

TEST(ClusterShape, PowerOfTwoLayoutHint) {
  EXPECT_EQ(power_of_two_floor(72), 64);
  EXPECT_EQ(power_of_two_floor(8), 8);
  EXPECT_EQ(power_of_two_floor(1), 1);
  EXPECT_FALSE(power_of_two_layout_hint(cluster_of(R"({"node": "dgx-h100", "num_nodes": 2})")));
  const auto hint =
      power_of_two_layout_hint(cluster_of(R"({"node": "gb200-nvl72", "num_nodes": 224})"));
  ASSERT_TRUE(hint.has_value());
  EXPECT_EQ(*hint,
            "the common layout on gb200-nvl72 uses 64 of each node's 72 GPUs "
            "(cluster.gpus_used_per_node 64; the rest are spares): num_nodes 224 then gives 14336 "
            "GPUs");
  // Already using 64 of 72: nothing to suggest.
  EXPECT_FALSE(power_of_two_layout_hint(
      cluster_of(R"({"node": "gb200-nvl72", "num_nodes": 4, "gpus_used_per_node": 64})")));
}

TEST(ClusterShape, GpusUsedPerNodeIsBoundedByTheNode) {
  try {
    cluster_of(R"({"node": "dgx-h100", "num_nodes": 2, "gpus_used_per_node": 16})");
    FAIL() << "16 of 8 GPUs accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cluster.gpus_used_per_node"), std::string::npos);
  }
}

}  // namespace
}  // namespace parplan
