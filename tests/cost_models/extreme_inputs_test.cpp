// Extreme but accepted jobs give finite results: the largest model the bounds allow
// (core/model_spec.h: 10^5 layers, 10^15 parameters), a 10^8 vocabulary, 10^8-token
// sequences, 10^9-sequence batches, 10^6 experts, the deepest accepted pipeline, the smallest
// node figures. Every number estimate_step and estimate_memory return is finite and the
// breakdown still sums to the step time; jobs just past the bounds are input errors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/check.h"
#include "cost_models/step_model.h"

namespace parplan::cost {
namespace {

Job job_from(const std::string& text) {
  return parse_job(parse_json(text, "extreme.json"), "extreme.json", "");
}

std::string model(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab,
                  const std::string& extra = "") {
  return R"({"name": "extreme", "num_layers": )" + std::to_string(layers) + R"(, "hidden_size": )" +
         std::to_string(hidden) + R"(, "num_attention_heads": )" + std::to_string(heads) +
         R"(, "vocab_size": )" + std::to_string(vocab) + extra + "}";
}

std::string job(const std::string& model_json, const std::string& cluster, int64_t gbs, int64_t seq,
                const std::string& plan) {
  return R"({"model": )" + model_json + R"(, "cluster": )" + cluster +
         R"(, "training": {"global_batch_size": )" + std::to_string(gbs) + R"(, "seq_length": )" +
         std::to_string(seq) + R"(}, "plan": )" + plan + "}";
}

void expect_finite(const Job& j) {
  const StepEstimate e = estimate_step(j);
  EXPECT_TRUE(std::isfinite(e.step_time_s)) << e.step_time_s;
  EXPECT_GT(e.step_time_s, 0.0);
  EXPECT_TRUE(std::isfinite(e.tokens_per_s));
  EXPECT_TRUE(std::isfinite(e.model_flops));
  EXPECT_TRUE(std::isfinite(e.hardware_flops));
  EXPECT_TRUE(std::isfinite(e.mfu));
  for (const auto& [name, seconds] : e.breakdown.named()) {
    EXPECT_TRUE(std::isfinite(seconds)) << name;
    EXPECT_GE(seconds, 0.0) << name;
  }
  EXPECT_NEAR(e.breakdown.total(), e.step_time_s, 1e-9 * e.step_time_s);
  const MemoryEstimate m = estimate_memory(j);
  EXPECT_TRUE(std::isfinite(m.peak_bytes));
  EXPECT_GT(m.peak_bytes, 0.0);
  for (const auto& stage : m.stages) EXPECT_TRUE(std::isfinite(stage.total_bytes()));
  // The int64 parameter counts agree with the overflow-free double count.
  const double params = model_params_in_double(j.model, j.training.seq_length);
  EXPECT_NEAR(static_cast<double>(j.model.total_params(j.training.seq_length)), params,
              1e-12 * params);
}

const std::string kOneNode = R"({"node": "dgx-h100", "num_nodes": 1})";

TEST(ExtremeInputs, LargestModelTheBoundsAllow) {
  // 10^5 layers of width 28000: 12 * 28000^2 * 10^5 = 9.4e14 parameters, 10^8 vocabulary.
  const Job j = job_from(
      job(model(100000, 28000, 100, 100000000), kOneNode, 8, 4096, R"({"tp": 4, "pp": 2})"));
  expect_finite(j);
  EXPECT_LE(model_params_in_double(j.model, 4096), kMaxModelParams);
}

TEST(ExtremeInputs, LongestSequenceAndLargestBatch) {
  expect_finite(job_from(job(R"("llama2-7b")", kOneNode, 8, 100000000, R"({"tp": 8})")));
  expect_finite(job_from(job(R"("llama2-7b")", kOneNode, 1000000000, 4096, R"({"tp": 8})")));
  // One pipeline stage and 10^9 micro-batches: extrapolated, not walked one by one.
  expect_finite(job_from(job(R"("llama2-7b")", R"({"node": "dgx-h100", "num_gpus": 1})", 1000000000,
                             100000000, "{}")));
  expect_finite(job_from(job(R"("llama2-7b")", kOneNode, 1000000000, 4096, R"({"pp": 8})")));
}

TEST(ExtremeInputs, MillionExpertsAndHugeLora) {
  const std::string moe =
      model(4, 64, 4, 100,
            R"(, "moe": {"num_experts": 1000000, "top_k": 1000000, "expert_ffn_hidden_size": 64})");
  expect_finite(job_from(job(moe, kOneNode, 8, 4096, "{}")));
  expect_finite(job_from(job(moe, kOneNode, 8, 4096, R"({"ep": 8})")));
  expect_finite(job_from(R"({"model": "llama2-7b", "cluster": )" + kOneNode +
                         R"(, "training": {"global_batch_size": 8, "seq_length": 4096,
                              "method": "lora", "lora_rank": 1000000}})"));
}

TEST(ExtremeInputs, DeepestAcceptedPipelineAndSmallestModel) {
  // pp * vpp = kMaxPipelineChunks on a cluster of 64 nodes.
  expect_finite(job_from(job(model(4096, 256, 8, 1000), R"({"node": "dgx-h100", "num_nodes": 8})",
                             64, 2048, R"({"pp": 64, "vpp": 8, "dp": 1})")));
  expect_finite(
      job_from(job(model(1, 1, 1, 1), R"({"node": "dgx-h100", "num_gpus": 1})", 1, 1, "{}")));
}

TEST(ExtremeInputs, SmallestNodeFigures) {
  const std::string node = R"({"node": {"name": "slow", "gpus_per_node": 8,
      "gpu": {"name": "G", "memory_gib": 0.001, "hbm_bandwidth_gbps": 0.001,
              "dense_tflops": {"bf16": 0.001}, "kernel_launch_us": 0, "gemm_m_half": 0,
              "gemm_n_half": 0, "gemm_k_half": 0, "sm_count": 1},
      "intra_node": {"fabric": "pcie", "link_bandwidth_gbps": 0.001, "island_gpus": 8,
                     "latency_us": 0},
      "inter_node": {"nics_per_node": 1, "nic_gbit_per_s": 0.001, "latency_us": 0}},
      "num_nodes": 4})";
  expect_finite(job_from(
      job(R"("mixtral-8x7b")", node, 64, 4096, R"({"tp": 2, "pp": 2, "ep": 8, "cp": 2})")));
}

TEST(ExtremeInputs, JustPastTheBoundsIsAnInputError) {
  // 10^5 layers of width 10^6: 1.2e18 parameters.
  EXPECT_THROW(job_from(job(model(100000, 1000000, 1000, 1000), kOneNode, 8, 4096, "{}")),
               InputError);
  // pp * vpp = 1024 model chunks.
  EXPECT_THROW(job_from(job(model(4096, 256, 8, 1000), R"({"node": "dgx-h100", "num_nodes": 16})",
                            128, 2048, R"({"pp": 128, "vpp": 8, "dp": 1})")),
               InputError);
  // A node without NICs on two nodes would make every inter-node collective infinite.
  EXPECT_THROW(job_from(job(R"("llama2-7b")", R"({"node": {"name": "ws", "gpus_per_node": 8,
      "gpu": {"name": "G", "memory_gib": 80, "hbm_bandwidth_gbps": 3000,
              "dense_tflops": {"bf16": 900}},
      "intra_node": {"fabric": "switch", "link_bandwidth_gbps": 450},
      "inter_node": {"nics_per_node": 0, "nic_gbit_per_s": 0}}, "num_nodes": 2})",
                            64, 4096, "{}")),
               InputError);
}

}  // namespace
}  // namespace parplan::cost
