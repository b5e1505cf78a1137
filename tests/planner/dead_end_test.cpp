#include "planner/dead_end.h"

#include <gtest/gtest.h>

#include "core/units.h"

namespace parplan::planner {
namespace {

Job job_for(const std::string& model, const std::string& node, int64_t nodes, int64_t gbs,
            int64_t seq) {
  const std::string text = R"({"model": ")" + model + R"(", "cluster": {"node": ")" + node +
                           R"(", "num_nodes": )" + std::to_string(nodes) +
                           R"(}, "training": {"global_batch_size": )" + std::to_string(gbs) +
                           R"(, "seq_length": )" + std::to_string(seq) + "}}";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Skip);
}

TEST(DeadEnd, PrimeFactorization) {
  EXPECT_EQ(prime_factorization(16128), "2^8 x 3^2 x 7");
  EXPECT_EQ(prime_factorization(100), "2^2 x 5^2");
  EXPECT_EQ(prime_factorization(97), "97");
  EXPECT_EQ(prime_factorization(1), "1");
}

// 405B on one 8-GPU node fits nowhere; the node count found fits, one fewer does not.
TEST(DeadEnd, SmallestFittingClusterFitsAndOneNodeFewerDoesNot) {
  const Job job = job_for("llama3.1-405b", "dgx-h100", 1, 64, 8192);
  SearchOptions options;
  options.threads = 2;
  const double capacity = job.cluster.node.gpu.memory_gib * kGiB;
  const auto here = least_memory_plan(job, {}, options.limits, 2);
  ASSERT_TRUE(here.has_value());
  EXPECT_GT(here->peak_bytes, capacity);
  const auto fit = smallest_fitting_cluster(job, options);
  ASSERT_TRUE(fit.has_value());
  EXPECT_GT(fit->num_nodes, 1);
  EXPECT_EQ(fit->num_gpus, fit->num_nodes * 8);
  EXPECT_LE(fit->plan.peak_bytes, capacity);
  const auto below =
      least_memory_plan(with_gpus(job, (fit->num_nodes - 1) * 8), {}, options.limits, 2);
  ASSERT_TRUE(below.has_value());
  EXPECT_GT(below->peak_bytes, capacity);
  // A stricter memory fraction needs at least as many nodes.
  SearchOptions strict = options;
  strict.max_memory_fraction = 0.5;
  const auto strict_fit = smallest_fitting_cluster(job, strict);
  ASSERT_TRUE(strict_fit.has_value());
  EXPECT_GE(strict_fit->num_nodes, fit->num_nodes);
}

// 16128 GPUs (224 NVL72 racks) hold a factor 63 that a 64-head, 80-layer model with a
// power-of-two batch cannot place: removing a 3 leaves 5376 = 2^8 x 21 GPUs (pp 21).
TEST(DeadEnd, BlockingFactorOfAnAwkwardGpuCount) {
  const Job job = job_for("llama3.1-70b", "gb200-nvl72", 224, 2048, 8192);
  SearchOptions options;
  options.threads = 2;
  EXPECT_TRUE(enumerate_plans(job, {}, options.limits).plans.empty());
  const auto blocking = blocking_factor(job, options);
  ASSERT_TRUE(blocking.has_value());
  EXPECT_EQ(blocking->factor, 3);
  EXPECT_EQ(blocking->gpus_without, 5376);
  EXPECT_EQ(blocking->factorization, "2^8 x 3^2 x 7");
}

}  // namespace
}  // namespace parplan::planner
