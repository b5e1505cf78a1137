// Weight and gradient bytes per framework, precision and GPU against the frameworks' own
// bookkeeping: Megatron's distributed-optimizer table, DeepSpeed's BF16_Optimizer and the fp8
// recipes of NeMo 2 / Megatron-Bridge.
#include <gtest/gtest.h>

#include "cost_models/memory_model.h"

namespace parplan::cost {
namespace {

Job job_for(const std::string& framework, const std::string& precision,
            const std::string& node = "dgx-a100-80gb") {
  const std::string text = R"({"framework": ")" + framework + R"(", "model": "gpt3-175b",
      "cluster": {"node": ")" +
                           node + R"(", "num_nodes": 12},
      "training": {"global_batch_size": 96, "seq_length": 2048, "precision": ")" +
                           precision + R"("},
      "plan": {"tp": 8, "pp": 12, "dp": 1, "zero_stage": 1, "recompute": "full"}})";
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

double gradient_bytes_per_param(const Job& job) {
  const StageMemory s = estimate_memory(job).stages[1];
  return s.gradients_bytes / s.params;
}

double weight_bytes_per_param(const Job& job) {
  const StageMemory s = estimate_memory(job).stages[1];
  return s.weights_bytes / s.params;
}

TEST(GradientMemory, MegatronKeepsFp16GradientsOrFp32MainGradients) {
  // Megatron-LM docs/source/distrib_optimizer.md: fp16 grads for fp16, fp32 main_grad for bf16.
  EXPECT_NEAR(gradient_bytes_per_param(job_for("megatron-core", "fp16")), 2.0, 1e-9);
  EXPECT_NEAR(gradient_bytes_per_param(job_for("megatron-core", "bf16")), 4.0, 1e-9);
}

TEST(GradientMemory, DeepSpeedBf16OptimizerKeepsBothGradientCopies) {
  // BF16_Optimizer: a full fp32 gradient buffer, and the pipeline engine keeps the bf16 .grad
  // between micro-batches (update_hp_grads(clear_lp_grads=False)): 4 + 2 bytes.
  EXPECT_NEAR(gradient_bytes_per_param(job_for("megatron-deepspeed", "bf16")), 6.0, 1e-9);
  // The fp16 path (ZeRO stage 1 optimizer) keeps only the fp16 gradients outside its
  // sharded fp32 partition.
  EXPECT_NEAR(gradient_bytes_per_param(job_for("megatron-deepspeed", "fp16")), 2.0, 1e-9);
}

TEST(WeightMemory, Fp8ParametersReplaceTheSixteenBitWeights) {
  EXPECT_NEAR(weight_bytes_per_param(job_for("megatron-core", "bf16", "dgx-h100")), 2.0, 1e-9);
  // Delayed-scaling fp8 (fp8_param_gather): the fp8 value and its transpose.
  EXPECT_NEAR(weight_bytes_per_param(job_for("megatron-core", "fp8", "dgx-h100")), 2.0, 1e-9);
  // Blackwell's MXFP8 recipe keeps the parameters as row- and column-wise MXFP8 data and
  // gathers them through the gradient buffer (Megatron-Bridge bf16_with_mxfp8_mixed).
  EXPECT_NEAR(weight_bytes_per_param(job_for("megatron-core", "fp8", "dgx-b200")), 2.0, 1e-9);
  // Without a sharded optimizer Megatron gathers no fp8 parameters: the 16-bit weights stay
  // beside Transformer Engine's cached fp8 weight and transpose (2 + 1 + 1 bytes).
  for (const char* node : {"dgx-h100", "dgx-b200"}) {
    Job job = job_for("megatron-core", "fp8", node);
    job.plan.zero_stage = 0;
    EXPECT_NEAR(weight_bytes_per_param(job), 4.0, 1e-9) << node;
  }
}

// PyTorch's expandable segments: the allocator reserves what is allocated, so the
// fragmentation reserve of the per-step tensors goes and nothing else moves.
TEST(AllocatorMemory, ExpandableSegmentsRemoveTheFragmentationReserveOnly) {
  const Job cached = job_for("megatron-core", "bf16", "dgx-h100");
  Job expandable = cached;
  expandable.training.expandable_segments = true;
  for (std::size_t s = 0; s < 12; ++s) {
    const StageMemory a = estimate_memory(cached).stages[s];
    const StageMemory b = estimate_memory(expandable).stages[s];
    const double per_step = a.activations_bytes + a.transient_bytes + a.logits_bytes;
    // FrameworkTraits::allocator_fragmentation 0.15 of the reserved pool: in use / 0.85.
    EXPECT_NEAR(a.fragmentation_bytes, per_step * 0.15 / 0.85, 1e-6 * per_step);
    EXPECT_EQ(b.fragmentation_bytes, 0.0);
    EXPECT_DOUBLE_EQ(b.total_bytes(), a.total_bytes() - a.fragmentation_bytes);
  }
}

}  // namespace
}  // namespace parplan::cost
