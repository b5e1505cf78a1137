#include "cost_models/lora.h"

#include <gtest/gtest.h>

#include "core/presets.h"
#include "cost_models/step_model.h"
#include "planner/search.h"

namespace parplan::cost {
namespace {

Job job_for(const std::string& model, const std::string& node, int64_t gpus,
            const std::string& method, const std::string& plan) {
  const std::string text =
      R"({"model": ")" + model + R"(", "cluster": {"node": ")" + node + R"(", "num_gpus": )" +
      std::to_string(gpus) +
      R"(}, "training": {"global_batch_size": 32, "seq_length": 2048, "method": ")" + method +
      R"(", "lora_rank": 16}, "plan": )" + plan + "}";
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

TEST(Lora, AdapterCountsMatchHandCalculation) {
  // r * (in + out) per adapted matrix: q, k, v, o, gate, up, down (PEFT all-linear targets).
  const ModelSpec m8 = *find_model_preset("llama3.1-8b");
  const double per_layer_8b =
      16.0 * ((4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 3 * (4096 + 14336));
  EXPECT_DOUBLE_EQ(lora_total_params(m8, 16), 32 * per_layer_8b);
  EXPECT_DOUBLE_EQ(lora_total_params(m8, 16), 41943040.0);  // PEFT's reported count, r=16
  const ModelSpec m70 = *find_model_preset("llama3.1-70b");
  const double per_layer_70b =
      16.0 * ((8192 + 8192) + 2 * (8192 + 1024) + (8192 + 8192) + 3 * (8192 + 28672));
  EXPECT_DOUBLE_EQ(lora_total_params(m70, 16), 80 * per_layer_70b);
  // Tensor parallelism splits B of column-parallel and A of row-parallel matrices.
  const double tp2 = lora_layer_params(m8, false, 16, 2);
  const double expected_tp2 =
      16.0 * ((4096 + 4096 / 2.0) + 2 * (4096 + 1024 / 2.0) + (4096 / 2.0 + 4096) +
              2 * (4096 + 14336 / 2.0) + (14336 / 2.0 + 4096));
  EXPECT_DOUBLE_EQ(tp2, expected_tp2);
}

TEST(Lora, MemoryHoldsFrozenBaseIn16BitAndTrainsOnlyAdapters) {
  const Job lora = job_for("llama3.1-8b", "dgx-h100", 1, "lora", R"({"micro_batch_size": 1})");
  const MemoryEstimate mem = estimate_memory(lora);
  const ModelSpec& m = lora.model;
  const double base = static_cast<double>(m.total_params(2048));
  const double adapters = lora_total_params(m, 16);
  const auto traits = framework_traits(lora.framework, lora.training, lora.plan);
  const StageMemory& s = mem.stages[0];
  EXPECT_NEAR(s.weights_bytes, 2.0 * base + traits.weight_bytes * adapters, 1e-6 * s.weights_bytes);
  EXPECT_NEAR(s.gradients_bytes, traits.grad_bytes * adapters, 1.0);
  EXPECT_NEAR(s.optimizer_bytes, traits.optimizer_bytes * adapters, 1.0);
}

TEST(Lora, BackwardSkipsBaseWeightGradientsAboutAThirdLess) {
  // Enough tokens per micro-batch that kernel launches do not dominate the small adapters.
  const Job lora =
      job_for("llama3.1-70b", "dgx-h100", 8, "lora", R"({"tp": 8, "micro_batch_size": 8})");
  const Job sft =
      job_for("llama3.1-70b", "dgx-h100", 8, "sft", R"({"tp": 8, "micro_batch_size": 8})");
  const LayerTimes l = compute_layer_times(lora);
  const LayerTimes f = compute_layer_times(sft);
  // Forward: the base GEMMs plus the adapters, whose A matrices re-read each projection's
  // input (memory-bound, ~10% here); backward: input gradients only (half the base GEMM work)
  // plus the adapters' gradients.
  EXPECT_GT(l.dense.forward.compute, f.dense.forward.compute);
  EXPECT_LT(l.dense.forward.compute, 1.2 * f.dense.forward.compute);
  EXPECT_LT(l.dense.backward.compute, 0.75 * f.dense.backward.compute);
  EXPECT_GT(l.dense.backward.compute, 0.45 * f.dense.backward.compute);
  // FLOPs: fwd + input gradient = 2/3 of fwd+bwd for the base matrices.
  EXPECT_NEAR(l.dense.model_flops / f.dense.model_flops, 2.0 / 3.0, 0.03);
  // Data-parallel traffic shrinks to the adapters.
  const Job lora_dp =
      job_for("llama3.1-8b", "dgx-h100", 16, "lora", R"({"tp": 1, "zero_stage": 0})");
  const Job sft_dp = job_for("llama3.1-8b", "dgx-h100", 16, "sft", R"({"tp": 1, "zero_stage": 0})");
  EXPECT_LT(estimate_step(lora_dp).breakdown.dp_comm + 1e-12,
            0.1 * estimate_step(sft_dp).breakdown.dp_comm + 1e-6);
}

// The base weights are frozen: what a zero-bubble schedule can defer (W) is the adapters'
// weight gradients alone, a small part of the backward; the embedding and the output layer
// have none.
TEST(Lora, ZeroBubbleDefersOnlyTheAdapterGradients) {
  const std::string plan = R"({"tp": 1, "pp": 2, "micro_batch_size": 4})";
  const LayerTimes lora = compute_layer_times(job_for("llama3.1-8b", "dgx-h100", 8, "lora", plan));
  const LayerTimes sft = compute_layer_times(job_for("llama3.1-8b", "dgx-h100", 8, "sft", plan));
  EXPECT_GT(lora.dense.backward_weight, 0.0);
  EXPECT_LT(lora.dense.backward_weight, 0.15 * lora.dense.backward.compute);
  EXPECT_LT(lora.dense.backward_weight, 0.2 * sft.dense.backward_weight);
  EXPECT_EQ(lora.embedding.backward_weight, 0.0);
  EXPECT_EQ(lora.head.backward_weight, 0.0);
  EXPECT_GT(sft.head.backward_weight, 0.0);
}

TEST(Lora, PlannerAvoidsTensorParallelismAcrossPcie) {
  // Llama-3.1-70B LoRA on one 4 x L40S PCIe server: the frozen base (141 GB) needs all four
  // GPUs; the best plan splits it by pipeline stages, not by tensor parallelism over PCIe.
  const std::string text =
      R"({"model": "llama3.1-70b", "cluster": {"node": "pcie-4x-l40s", "num_nodes": 1},
      "training": {"global_batch_size": 32, "seq_length": 2048, "method": "lora", "lora_rank": 16}})";
  const Job job = parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Skip);
  planner::SearchOptions options;
  options.top_k = 3;
  const planner::SearchResult r = planner::search_plans(job, options);
  ASSERT_FALSE(r.top.empty());
  const auto& best = r.top.front();
  EXPECT_EQ(best.plan.tp, 1) << "tp over PCIe chosen: tp_comm " << best.estimate.breakdown.tp_comm;
  EXPECT_GT(best.plan.pp * best.plan.dp, 1);
  // Forcing tp=4 is slower, and the breakdown says why: exposed tensor-parallel traffic.
  planner::SearchOptions forced = options;
  forced.fixes = planner::parse_fixes({"tp=4"});
  const planner::SearchResult t = planner::search_plans(job, forced);
  ASSERT_FALSE(t.top.empty());
  EXPECT_GT(t.top.front().estimate.step_time_s, best.estimate.step_time_s);
  EXPECT_GT(t.top.front().estimate.breakdown.tp_comm, 0.1 * t.top.front().estimate.step_time_s);
}

}  // namespace
}  // namespace parplan::cost
