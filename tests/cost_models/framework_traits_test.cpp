// What a framework's traits imply, checked through the cost models they feed.
#include "cost_models/framework_traits.h"

#include <gtest/gtest.h>

#include "core/json_input.h"
#include "cost_models/data_parallel_update.h"
#include "cost_models/layer_cost.h"
#include "cost_models/memory_model.h"
#include "cost_models/step_model.h"

namespace parplan::cost {
namespace {

Job gpt_job(const std::string& framework) {
  // A GPT-style (LayerNorm) model, one GPU, no recomputation, bf16.
  const std::string text = R"({"framework": ")" + framework + R"(",
    "model": {"name": "gpt", "num_layers": 4, "hidden_size": 2048, "num_attention_heads": 16,
              "ffn_hidden_size": 8192, "vocab_size": 50368, "activation": "gelu",
              "normalization": "layernorm", "tied_embeddings": true},
    "cluster": {"node": "dgx-a100-80gb", "num_gpus": 1},
    "training": {"global_batch_size": 2, "seq_length": 2048, "precision": "bf16"},
    "plan": {"tp": 1, "pp": 1, "micro_batch_size": 2, "recompute": "none"}})";
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

TEST(FrameworkTraits, MptUnderLlmFoundryKeepsNoDropoutMasks) {
  // Korthikanti et al. 2022 count two 1-byte dropout masks of s*b*h per layer after the
  // attention and MLP blocks (flash attention keeps no attention-probability mask), and one
  // after the embedding. MPT's dropout probabilities default to 0, so llm-foundry stores none.
  const Job megatron = gpt_job("megatron-core");
  const Job foundry = gpt_job("llm-foundry");
  const double with_masks = estimate_memory(megatron).stages.front().activations_bytes;
  const double without = estimate_memory(foundry).stages.front().activations_bytes;
  const double sbh = 2048.0 * 2 * 2048;
  EXPECT_NEAR(with_masks - without, (4 * 2 + 1) * sbh, 1e-6 * with_masks);
}

TEST(FrameworkTraits, DataParallelBucketsFollowEachFrameworksRule) {
  // Megatron-Core: bucket_size = max(40M, 1M * dp) parameters per model chunk
  // (DistributedDataParallelConfig); 2020-2022 Megatron-LM and the executor: one collective
  // per gradient buffer; DeepSpeed: reduce_bucket_size 5e8; torchtitan's DDP: 100 MiB of fp32
  // gradients; Composer's DDP: PyTorch's 25 MiB.
  auto buckets = [](const std::string& framework, int64_t ranks, double params) {
    const Job job = gpt_job(framework);
    return dp_buckets_per_chunk(framework_traits(job.framework, job.training, job.plan), ranks,
                                params);
  };
  EXPECT_EQ(buckets("megatron-core", 8, 8.8e9), 220);       // ceil(8.8e9 / 40e6)
  EXPECT_EQ(buckets("megatron-core", 336, 456e6), 2);       // ceil(456e6 / 336e6)
  EXPECT_EQ(buckets("megatron-core", 64, 1e6), 1);          // never fewer than one
  EXPECT_EQ(buckets("megatron-lm", 336, 8.8e9), 1);         // the whole buffer
  EXPECT_EQ(buckets("parplan", 2, 8.8e9), 1);               // one all-reduce (executor/trainer.cpp)
  EXPECT_EQ(buckets("megatron-deepspeed", 64, 8.8e9), 18);  // ceil(8.8e9 / 5e8)
  EXPECT_EQ(buckets("deepspeed", 64, 8.8e9), 18);
  EXPECT_EQ(buckets("torchtitan", 64, 8.0e9), std::ceil(8.0e9 / (100.0 * 1024 * 1024 / 4)));
  EXPECT_EQ(buckets("llm-foundry", 64, 1.0e9), std::ceil(1.0e9 / (25.0 * 1024 * 1024 / 4)));
}

TEST(MeasuredKernels, CountOnlyForJobsOfThePrecisionTheyWereTakenIn) {
  // A CUDA profile's kernel figures are the executor's fp32 kernels (GpuSpec::
  // kernel_figures_precision): a bf16 job keeps the bandwidth model, an fp32 job uses them.
  Job job = gpt_job("megatron-core");
  GpuSpec& gpu = job.cluster.node.gpu;
  const FrameworkTraits traits = framework_traits(job.framework, job.training, job.plan);
  const double model = memory_kernel_bytes_per_s(gpu, traits, "layernorm_forward", Precision::Bf16);
  const double bf16_step = estimate_step(job).step_time_s;
  gpu.kernel_gbps["layernorm_forward"] = 1.0;  // absurdly slow: any use shows
  gpu.kernel_gbps["adamw"] = 1.0;
  gpu.kernel_figures_precision = Precision::Fp32;
  EXPECT_DOUBLE_EQ(memory_kernel_bytes_per_s(gpu, traits, "layernorm_forward", Precision::Bf16),
                   model);
  EXPECT_DOUBLE_EQ(memory_kernel_bytes_per_s(gpu, traits, "layernorm_forward", Precision::Fp32),
                   1e9);
  EXPECT_DOUBLE_EQ(estimate_step(job).step_time_s, bf16_step);
  // Unset (a CPU profile): every job uses them.
  gpu.kernel_figures_precision.reset();
  EXPECT_GT(estimate_step(job).step_time_s, 2 * bf16_step);
}

// torchtitan's eager norms, rotary embedding and SwiGLU move 9, 5 and 1.7 times a fused
// kernel's bytes; torch.compile fuses them (the traffic factors return to 1), which shortens
// the layer's memory-bound work and nothing else. Frameworks with fused kernels ignore the key
// and say so.
TEST(FrameworkTraits, TorchCompileFusesTorchtitansEagerElementwiseOps) {
  auto llama = [](const std::string& framework, const std::string& compile) {
    const std::string text = R"({"framework": ")" + framework + R"(", "model": "llama3.1-8b",
      "cluster": {"node": "dgx-h100", "num_gpus": 8},
      "training": {"global_batch_size": 16, "seq_length": 8192)" +
                             compile + R"(},
      "plan": {"tp": 1, "pp": 1, "micro_batch_size": 2, "zero_stage": 3}})";
    return parse_job(parse_json(text, "job.json"), "job.json", "");
  };
  const Job eager = llama("torchtitan", "");
  const Job compiled = llama("torchtitan", R"(, "torch_compile": true)");
  const FrameworkTraits e = framework_traits(eager.framework, eager.training, eager.plan);
  const FrameworkTraits c = framework_traits(compiled.framework, compiled.training, compiled.plan);
  EXPECT_EQ(e.norm_traffic_factor, 9.0);
  EXPECT_EQ(c.norm_traffic_factor, 1.0);
  EXPECT_EQ(c.rope_traffic_factor, 1.0);
  EXPECT_EQ(c.activation_traffic_factor, 1.0);
  const LayerTimes le = compute_layer_times(eager);
  const LayerTimes lc = compute_layer_times(compiled);
  EXPECT_LT(lc.dense.forward.compute, le.dense.forward.compute);
  EXPECT_LT(estimate_step(compiled).step_time_s, estimate_step(eager).step_time_s);
  EXPECT_EQ(estimate_step(compiled).model_flops, estimate_step(eager).model_flops);
  EXPECT_TRUE(compiled.warnings.empty());

  const Job megatron = llama("megatron-core", "");
  const Job megatron_compiled = llama("megatron-core", R"(, "torch_compile": true)");
  EXPECT_EQ(estimate_step(megatron_compiled).step_time_s, estimate_step(megatron).step_time_s);
  ASSERT_EQ(megatron_compiled.warnings.size(), 1u);
  EXPECT_NE(megatron_compiled.warnings.front().find("training.torch_compile"), std::string::npos);
}

}  // namespace
}  // namespace parplan::cost
