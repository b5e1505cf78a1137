// Time to train, goodput and cost (cost_models/time_to_train.h): the closed forms (Young's
// interval, goodput with a known failure rate and checkpoint cost, energy), monotonicity over
// the cluster size, and the job keys' errors.
#include "cost_models/time_to_train.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/check.h"
#include "core/presets.h"
#include "core/training_spec.h"

namespace parplan::cost {
namespace {

Job make_job(int64_t nodes, const std::string& run_keys, const std::string& node = "dgx-h100",
             const std::string& model = "llama3.1-70b") {
  const std::string text = R"({"model": ")" + model + R"(", "cluster": {"node": ")" + node +
                           R"(", "num_nodes": )" + std::to_string(nodes) +
                           R"(}, "training": {"global_batch_size": 16384, "seq_length": 8192)" +
                           (run_keys.empty() ? "" : ", " + run_keys) + R"(}, "plan": {"tp": 8}})";
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

// A step estimate with only the throughput set: the run model reads nothing else.
StepEstimate at_tokens_per_s(double tokens_per_s) {
  StepEstimate e;
  e.tokens_per_s = tokens_per_s;
  return e;
}

TEST(TimeToTrain, YoungIntervalIsTheSquareRootOfTwiceCostTimesMtbf) {
  EXPECT_DOUBLE_EQ(young_interval_s(2.0, 10'000.0), 200.0);  // sqrt(2 * 2 * 10^4)
  EXPECT_DOUBLE_EQ(young_interval_s(50.0, 3600.0), 600.0);   // sqrt(2 * 50 * 3600)
}

TEST(TimeToTrain, GoodputWithKnownFailureRateAndCheckpointCost) {
  // C = 2 s every T = 200 s, failures every M = 10^4 s costing R = 600 s plus T/2 lost:
  // 1 - 2/200 - (100 + 600)/10^4 = 1 - 0.01 - 0.07 = 0.92.
  EXPECT_NEAR(goodput(2.0, 200.0, 600.0, 10'000.0), 0.92, 1e-12);
  // No failures to speak of and free checkpoints: all the time is useful.
  EXPECT_NEAR(goodput(0.0, 1e6, 0.0, 1e18), 1.0, 1e-9);
  // Failures faster than the restart: no progress, clamped to 0.
  EXPECT_EQ(goodput(10.0, 100.0, 1000.0, 500.0), 0.0);
}

TEST(TimeToTrain, YoungIntervalMaximisesTheGoodput) {
  const double c = 5.0, r = 300.0, m = 20'000.0;
  const double t = young_interval_s(c, m);
  const double best = goodput(c, t, r, m);
  for (const double factor : {0.5, 0.8, 0.95, 1.05, 1.25, 2.0}) {
    EXPECT_LT(goodput(c, t * factor, r, m), best) << factor;
  }
}

TEST(TimeToTrain, DefaultMtbfIsTheLlama3InterruptionRate) {
  // Llama 3 report §3.3.4: 419 unexpected interruptions in 54 days on 16,384 H100s.
  EXPECT_NEAR(kDefaultGpuMtbfHours, 50'677.0, 1.0);
  const Job job = make_job(2048, R"("total_tokens": 15.6e12)");
  const auto run = estimate_time_to_train(job, at_tokens_per_s(2e6));
  ASSERT_TRUE(run);
  EXPECT_NEAR(run->cluster_mtbf_s, 54.0 * 86400.0 / 419.0, 1e-6 * run->cluster_mtbf_s);
}

TEST(TimeToTrain, ClosedFormsOfOneRun) {
  const Job job = make_job(8, R"("total_tokens": 1e12, "gpu_hour_usd": 2.5, "gpu_mtbf_hours": 6400,
           "checkpoint_bandwidth_gbps": 2, "restart_overhead_s": 300, "pue": 1.25)");
  const auto run = estimate_time_to_train(job, at_tokens_per_s(1e6));
  ASSERT_TRUE(run);
  // Megatron-Core: 2 bytes of bf16 weights + 12 of fp32 master weights and Adam moments.
  const double params = static_cast<double>(job.model.total_params(8192));
  EXPECT_DOUBLE_EQ(run->checkpoint_bytes, params * 14.0);
  EXPECT_DOUBLE_EQ(run->checkpoint_write_s, params * 14.0 / (8 * 2e9));
  EXPECT_DOUBLE_EQ(run->cluster_mtbf_s, 6400.0 * 3600.0 / 64.0);
  const double interval = std::sqrt(2 * run->checkpoint_write_s * run->cluster_mtbf_s);
  EXPECT_DOUBLE_EQ(run->checkpoint_interval_s, interval);
  const double g = 1 - run->checkpoint_write_s / interval - (interval / 2 + 300) / 360'000.0;
  EXPECT_NEAR(run->goodput, g, 1e-12);
  ASSERT_TRUE(run->progresses);
  const double wall_s = 1e12 / 1e6 / g;
  EXPECT_NEAR(run->time_to_train_days, wall_s / 86400, 1e-9 * wall_s);
  EXPECT_NEAR(run->gpu_hours, wall_s / 3600 * 64, 1e-9 * wall_s);
  ASSERT_TRUE(run->cost_usd);
  EXPECT_NEAR(*run->cost_usd, run->gpu_hours * 2.5, 1e-9 * *run->cost_usd);
  // Energy: 64 GPUs x (700 W + 4600 W / 8) x PUE 1.25 over the wall time, in MWh.
  ASSERT_TRUE(run->energy_mwh);
  EXPECT_NEAR(*run->energy_mwh, 64 * (700.0 + 575.0) * 1.25 * wall_s / 3.6e9,
              1e-9 * *run->energy_mwh);
}

TEST(TimeToTrain, PowerOverridesReplaceTheNodeFigures) {
  const Job job =
      make_job(2, R"("total_tokens": 1e9, "gpu_power_w": 500, "node_overhead_w": 800, "pue": 1)");
  ASSERT_TRUE(cluster_power_w(job));
  EXPECT_DOUBLE_EQ(*cluster_power_w(job), 16 * (500.0 + 100.0));
}

TEST(TimeToTrain, NoPriceNoCostAndNoTokensNoRun) {
  const auto run =
      estimate_time_to_train(make_job(1, R"("total_tokens": 1e9)"), at_tokens_per_s(1e5));
  ASSERT_TRUE(run);
  EXPECT_FALSE(run->cost_usd);
  EXPECT_FALSE(estimate_time_to_train(make_job(1, ""), at_tokens_per_s(1e5)));
}

TEST(TimeToTrain, GoodputFallsAndTheIntervalShrinksAsTheClusterGrows) {
  double last_goodput = 2, last_interval = 1e300, last_mtbf = 1e300;
  for (const int64_t nodes : {8, 64, 512, 2048, 8192}) {
    const auto run =
        estimate_time_to_train(make_job(nodes, R"("total_tokens": 1e12)"), at_tokens_per_s(1e6));
    ASSERT_TRUE(run);
    SCOPED_TRACE(nodes);
    EXPECT_LT(run->goodput, last_goodput);
    EXPECT_LT(run->checkpoint_interval_s, last_interval);
    EXPECT_LT(run->cluster_mtbf_s, last_mtbf);
    last_goodput = run->goodput;
    last_interval = run->checkpoint_interval_s;
    last_mtbf = run->cluster_mtbf_s;
  }
}

TEST(TimeToTrain, FailuresFasterThanRestartsNeverFinish) {
  const auto run = estimate_time_to_train(
      make_job(1024, R"("total_tokens": 1e12, "gpu_mtbf_hours": 10, "restart_overhead_s": 3600)"),
      at_tokens_per_s(1e6));
  ASSERT_TRUE(run);
  EXPECT_EQ(run->goodput, 0.0);
  EXPECT_FALSE(run->progresses);
}

TEST(TimeToTrain, EveryNodePresetHasPowerFigures) {
  for (const auto& name : node_preset_names()) {
    const NodeSpec node = *find_node_preset(name);
    SCOPED_TRACE(name);
    EXPECT_GE(node.gpu.tdp_w, 250.0);
    EXPECT_LE(node.gpu.tdp_w, 1400.0);  // GB300 (Blackwell Ultra) is the largest
    // CPUs, NICs, switches and fans: between 50 W and 1 kW per GPU.
    const double per_gpu = node.node_overhead_w / static_cast<double>(node.gpus_per_node);
    EXPECT_GE(per_gpu, 50.0);
    EXPECT_LE(per_gpu, 1000.0);
  }
}

void expect_input_error(const std::string& run_keys, const std::string& key,
                        const std::string& found) {
  try {
    make_job(1, run_keys);
    FAIL() << "no error for " << run_keys;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("job.json"), std::string::npos) << message;
    EXPECT_NE(message.find(key), std::string::npos) << message;
    EXPECT_NE(message.find(found), std::string::npos) << message;
  }
}

TEST(TimeToTrain, BadRunKeysAreInputErrorsNamingTheKey) {
  expect_input_error(R"("total_tokens": -5)", "training.total_tokens", "found -5");
  expect_input_error(R"("total_tokens": 1e9, "checkpoint_bandwidth_gbps": 0)",
                     "training.checkpoint_bandwidth_gbps", "found 0");
  expect_input_error(R"("gpu_hour_usd": 2)", "training.gpu_hour_usd",
                     "without training.total_tokens");
  expect_input_error(R"("total_tokens": 1e9, "pue": 0.9)", "training.pue", "found 0.9");
  expect_input_error(R"("total_tokens": "1e9")", "training.total_tokens", "found \"1e9\"");
}

}  // namespace
}  // namespace parplan::cost
