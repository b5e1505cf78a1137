#include "cost_models/step_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/gemm_efficiency.h"
#include "core/presets.h"
#include "cost_models/collective_model.h"
#include "cost_models/group_placement.h"
#include "cost_models/layer_cost.h"

namespace parplan::cost {
namespace {

// `model`: a preset name, or an inline model object (text starting with "{").
Job make_job(const std::string& model, const std::string& node, int64_t nodes, int64_t gbs,
             int64_t seq, const std::string& plan, const std::string& framework = "megatron-core",
             const std::string& precision = "bf16") {
  const std::string model_value = model.rfind('{', 0) == 0 ? model : '"' + model + '"';
  const std::string text = R"({"framework": ")" + framework + R"(", "model": )" + model_value +
                           R"(, "cluster": {"node": ")" + node + R"(", "num_nodes": )" +
                           std::to_string(nodes) + R"(}, "training": {"global_batch_size": )" +
                           std::to_string(gbs) + R"(, "seq_length": )" + std::to_string(seq) +
                           R"(, "precision": ")" + precision + R"("}, "plan": )" + plan + "}";
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

void expect_invariants(const Job& job, const StepEstimate& e) {
  EXPECT_NEAR(e.breakdown.total(), e.step_time_s, 1e-9 * e.step_time_s);
  EXPECT_GE(e.step_time_s, e.breakdown.compute);
  EXPECT_GT(e.mfu, 0.0);
  EXPECT_LT(e.mfu, 1.0);
  for (const auto& [name, seconds] : e.breakdown.named()) EXPECT_GE(seconds, 0.0) << name;
  if (job.plan.tp == 1) {
    EXPECT_EQ(e.breakdown.tp_comm, 0.0);
  }
  if (job.plan.pp == 1) {
    EXPECT_NEAR(e.breakdown.pp_bubble, 0.0, 1e-9 * e.step_time_s);
  }
  if (job.plan.cp == 1) {
    EXPECT_EQ(e.breakdown.cp_comm, 0.0);
  }
  // Per-GPU memory is at least the model's parameters divided over tp*pp in 16-bit.
  const double params = static_cast<double>(job.model.total_params(job.training.seq_length));
  EXPECT_GE(e.memory.peak_bytes, 2.0 * params / static_cast<double>(job.plan.tp * job.plan.pp) /
                                     static_cast<double>(job.plan.dp * job.plan.cp) * 0.99);
}

TEST(StepModel, InvariantsOverAGridOfPlans) {
  for (const char* plan :
       {R"({"tp": 1, "pp": 1})", R"({"tp": 8, "pp": 1})", R"({"tp": 4, "pp": 4})",
        R"({"tp": 2, "pp": 4, "vpp": 2})", R"({"tp": 8, "pp": 2, "recompute": "full"})",
        R"({"tp": 4, "pp": 2, "cp": 2})", R"({"tp": 1, "pp": 1, "zero_stage": 3})",
        R"({"tp": 2, "pp": 8, "schedule": "zero-bubble"})"}) {
    const Job job = make_job("llama3.1-8b", "dgx-h100", 4, 256, 8192, plan);
    const StepEstimate e = estimate_step(job);
    SCOPED_TRACE(plan);
    expect_invariants(job, e);
  }
}

// Megatron-LM's distributed optimizer (before Megatron-Core) reduce-scatters the gradients
// and all-gathers the updated parameters through one grad buffer, so both move in the grad
// dtype: fp32 for bf16 training, fp16 for fp16. Neither overlaps the step there, so bf16's
// data-parallel time is twice fp16's.
TEST(StepModel, MegatronLmGathersParametersInTheGradBufferDtype) {
  const std::string plan = R"({"tp": 1, "pp": 1, "dp": 16, "zero_stage": 1})";
  const Job bf16 = make_job("llama2-7b", "dgx-a100-80gb", 2, 16, 2048, plan, "megatron-lm", "bf16");
  const Job fp16 = make_job("llama2-7b", "dgx-a100-80gb", 2, 16, 2048, plan, "megatron-lm", "fp16");
  const double ratio =
      estimate_step(bf16).breakdown.dp_comm / estimate_step(fp16).breakdown.dp_comm;
  EXPECT_NEAR(ratio, 2.0, 0.02);
}

TEST(StepModel, MoreDataParallelReplicasShortenTheStep) {
  const Job small = make_job("llama3.1-8b", "dgx-h100", 2, 256, 4096, R"({"tp": 2})");
  const Job large = make_job("llama3.1-8b", "dgx-h100", 8, 256, 4096, R"({"tp": 2})");
  EXPECT_LT(estimate_step(large).step_time_s, estimate_step(small).step_time_s);
}

TEST(StepModel, Fp8IsFasterThanBf16OnHopperButNotTwiceAsFast) {
  const Job bf16 =
      make_job("llama3.1-70b", "dgx-h100", 8, 128, 8192, R"({"tp": 4, "pp": 4, "vpp": 5})");
  const Job fp8 = make_job("llama3.1-70b", "dgx-h100", 8, 128, 8192,
                           R"({"tp": 4, "pp": 4, "vpp": 5})", "megatron-core", "fp8");
  const double speedup = estimate_step(bf16).step_time_s / estimate_step(fp8).step_time_s;
  EXPECT_GT(speedup, 1.2);
  EXPECT_LT(speedup, 2.0);
}

TEST(StepModel, FullRecomputeCostsAboutAThirdMoreCompute) {
  const Job none = make_job("gpt3-175b", "dgx-a100-80gb", 48, 1536, 2048, R"({"tp": 8, "pp": 12})");
  const Job full = make_job("gpt3-175b", "dgx-a100-80gb", 48, 1536, 2048,
                            R"({"tp": 8, "pp": 12, "recompute": "full"})");
  const StepEstimate a = estimate_step(none);
  const StepEstimate b = estimate_step(full);
  EXPECT_NEAR(b.breakdown.recompute / a.breakdown.compute, 1.0 / 3.0, 0.1);
  EXPECT_LT(b.memory.peak_bytes, a.memory.peak_bytes);
  EXPECT_NEAR(a.model_flops, b.model_flops, 1e-6 * a.model_flops);  // model FLOPs exclude it
}

// Gap on `stage` between the end of its first forward and the start of its next action.
double gap_after_first_forward(const StepEstimate& e, int64_t stage) {
  const auto& events = e.pipeline.events;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].stage != stage || events[i].op != PipeOp::Forward) continue;
    for (std::size_t j = i + 1; j < events.size(); ++j) {
      if (events[j].stage == stage) return events[j].start_s - events[i].end_s;
    }
  }
  return -1;
}

// Megatron-Core overlaps pipeline sends only under the interleaved schedule (Megatron-LM
// turns overlap_p2p_comm off without virtual stages; Megatron-Bridge selects it for vpp > 1):
// in 1F1B the first stage is held for the transfer after each forward it sends on, under the
// interleaved schedule its warm-up forwards follow each other at once.
TEST(StepModel, MegatronCoreBlocksOnPipelineSendsWithoutInterleaving) {
  const StepOptions events{.record_pipeline_events = true};
  const Job one_f_one_b = make_job("llama3.1-70b", "dgx-h100", 4, 64, 4096,
                                   R"({"tp": 8, "pp": 4, "sequence_parallel": true})");
  const StepEstimate blocking = estimate_step(one_f_one_b, events);
  ASSERT_GT(blocking.p2p_s, 0.0);
  EXPECT_NEAR(gap_after_first_forward(blocking, 0), blocking.p2p_s, 1e-12);

  const Job interleaved = make_job("llama3.1-70b", "dgx-h100", 4, 64, 4096,
                                   R"({"tp": 8, "pp": 4, "vpp": 2, "sequence_parallel": true})");
  const StepEstimate overlapped = estimate_step(interleaved, events);
  ASSERT_GT(overlapped.p2p_s, 0.0);
  EXPECT_NEAR(gap_after_first_forward(overlapped, 0), 0.0, 1e-12);
}

TEST(StepModel, TensorParallelOverlapStopsAtTheNode) {
  // Megatron-Core's userbuffers overlap hides TP collectives under the GEMMs inside a DGX
  // H100; a tp 16 group spans two nodes, has no userbuffers, and exposes its collectives.
  const Job inside = make_job("nemotron4-340b", "dgx-h100", 48, 384, 4096,
                              R"({"tp": 8, "pp": 6, "sequence_parallel": true})");
  const Job across = make_job("nemotron4-340b", "dgx-h100", 48, 384, 4096,
                              R"({"tp": 16, "pp": 3, "sequence_parallel": true})");
  const LayerTimes in = compute_layer_times(inside);
  const LayerTimes out = compute_layer_times(across);
  // Inside the node only the first of tp chunks (plus what exceeds the GEMMs) is exposed.
  EXPECT_LT(in.dense.forward.tp_comm, 0.25 * in.dense.forward.compute);
  // Across nodes the all-gathers and reduce-scatters are exposed in full: larger than inside
  // the node although each GPU moves about the same bytes.
  EXPECT_GT(out.dense.forward.tp_comm, 3 * in.dense.forward.tp_comm);
}

TEST(StepModel, DTensorTensorParallelExposesTheBackwardCollectives) {
  // Megatron issues the backward TP collective before the weight-gradient GEMM and hides it
  // there; torchtitan's DTensor runs it after both gradients, so the backward pass exposes
  // the same collectives as the forward.
  const std::string plan =
      R"({"tp": 8, "micro_batch_size": 2, "zero_stage": 1, "sequence_parallel": true})";
  // "other": Megatron-style kernels and backward overlap, no userbuffers.
  const LayerTimes megatron =
      compute_layer_times(make_job("llama3.1-8b", "dgx-h100", 1, 64, 8192, plan, "other"));
  const LayerTimes titan =
      compute_layer_times(make_job("llama3.1-8b", "dgx-h100", 1, 64, 8192, plan, "torchtitan"));
  ASSERT_GT(titan.dense.forward.tp_comm, 0.0);
  EXPECT_NEAR(titan.dense.backward.tp_comm, titan.dense.forward.tp_comm,
              1e-9 + 1e-6 * titan.dense.forward.tp_comm);
  EXPECT_LT(megatron.dense.backward.tp_comm, 0.5 * titan.dense.backward.tp_comm);
}

double flash_attention_forward_s(const std::string& framework, const std::string& node) {
  const Job job =
      make_job("llama2-7b", node, 1, 8, 4096, R"({"tp": 1, "zero_stage": 3})", framework);
  const ExplainedLayer layer = explain_layer(job, false);
  for (const OpRecord& op : layer.ops) {
    if (op.kind == "attention") return op.forward_s;
  }
  ADD_FAILURE() << "no attention op";
  return 0;
}

TEST(StepModel, FlashAttentionOneDesignIsSlowerOnAmpereOnly) {
  // llm-foundry's Triton kernel follows FlashAttention-1's design: 0.53 of FlashAttention-2's
  // throughput on A100 (the middles of 25-40% and 50-73% of peak). On H100 both Ampere-design
  // kernels share FlashAttention-2's bound (torchtitan's SDPA kernel is FlashAttention-2).
  const double fa1_a100 = flash_attention_forward_s("llm-foundry", "dgx-a100-80gb");
  const double fa2_a100 = flash_attention_forward_s("torchtitan", "dgx-a100-80gb");
  EXPECT_NEAR(fa2_a100 / fa1_a100, 32.5 / 61.5, 0.005);  // 0.53
  const double fa1_h100 = flash_attention_forward_s("llm-foundry", "dgx-h100");
  const double fa2_h100 = flash_attention_forward_s("torchtitan", "dgx-h100");
  EXPECT_NEAR(fa2_h100 / fa1_h100, 1.0, 1e-6);
  // Kernels written for Hopper (megatron-core: cuDNN / Transformer Engine) are faster there.
  EXPECT_LT(flash_attention_forward_s("megatron-core", "dgx-h100"), 0.5 * fa2_h100);
}

TEST(StepModel, ComposerFsdpExposesTheBackwardGathers) {
  // Composer's BACKWARD_POST prefetch issues a layer's backward all-gather after the previous
  // layer's gradients: one exposed gather per layer and micro-batch. FSDP2 (torchtitan)
  // prefetches it under the gradient computation.
  const std::string plan = R"({"tp": 1, "micro_batch_size": 4, "zero_stage": 3})";
  const Job foundry = make_job("llama2-7b", "dgx-h100", 1, 64, 4096, plan, "llm-foundry");
  const Job titan = make_job("llama2-7b", "dgx-h100", 1, 64, 4096, plan, "torchtitan");
  const ModelSpec& m = foundry.model;
  const double h = static_cast<double>(m.hidden_size);
  const double layer_params = 4 * h * h + 3 * h * static_cast<double>(m.ffn_hidden_size);
  const double gather_s =
      collective_cost(foundry.cluster.node, Collective::AllGather,
                      place_group(foundry.plan, foundry.cluster.node, {"dp"}), 2 * layer_params)
          .time_s;
  const double micro_batches = 64.0 / (8 * 4);
  const double exposed_gathers = micro_batches * static_cast<double>(m.num_layers) * gather_s;
  // What the prefetch hides differs by the gathers less the processors they take either way.
  const double hidden_share = 1.0 - comm_sm_fraction(foundry.cluster.node.gpu);
  EXPECT_NEAR(estimate_step(foundry).breakdown.fsdp_comm - estimate_step(titan).breakdown.fsdp_comm,
              hidden_share * exposed_gathers, 0.05 * exposed_gathers);
}

// A plan with more stages than layers (the first holds only the embedding, the last only the
// output layer) still gathers and reduce-scatters its layers' weights under ZeRO-3: the
// per-layer collectives come from a stage that holds layers, not from the first stage.
TEST(StepModel, Zero3CollectivesDoNotVanishWithAnEmbeddingOnlyStage) {
  const std::string tiny = R"({"name": "tiny", "num_layers": 2, "hidden_size": 2048,
      "num_attention_heads": 16, "ffn_hidden_size": 8192, "vocab_size": 1024})";
  const Job job = make_job(tiny, "dgx-h100", 1, 8, 2048, R"({"tp": 1, "pp": 4, "zero_stage": 3})");
  const auto split = layers_per_chunk(job.model, job.plan);
  ASSERT_EQ(split, (std::vector<int64_t>{0, 1, 1, 0}));
  const StepEstimate e = estimate_step(job);
  expect_invariants(job, e);
  EXPECT_GT(e.breakdown.fsdp_comm, 0.0);
}

// DeepSpeed ZeRO-3 over the 16 ranks of two DGX A100 nodes, fp16, one micro-batch of 2 per
// rank; `model` is a preset name or an inline model object.
Job deepspeed_zero3_job(const std::string& model, const std::string& recompute) {
  return make_job(
      model, "dgx-a100-80gb", 2, 32, 2048,
      R"({"tp": 1, "micro_batch_size": 2, "zero_stage": 3, "recompute": ")" + recompute + R"("})",
      "deepspeed", "fp16");
}

// DeepSpeed's bucketed ZeRO-3 collective of one layer's 16-bit values over the job's
// data-parallel group: ceil(params / bucket) collectives (FrameworkTraits::fsdp_*_bucket_params).
double deepspeed_layer_collective_s(const Job& job, Collective op, double bucket_params) {
  const double params = static_cast<double>(job.model.layer_params(0));
  const double buckets = std::ceil(params / bucket_params);
  return buckets * collective_cost(job.cluster.node, op,
                                   place_group(job.plan, job.cluster.node, {"dp"}),
                                   2 * params / buckets)
                       .time_s;
}

TEST(StepModel, DeepSpeedZero3FetchBlocksAndRegathersOnlyFarReusedWeights) {
  // The 2021 ZeRO-3 fetch blocks the device (FrameworkTraits::zero3_fetch_blocks): per layer
  // and micro-batch a gather before the forward, one before the backward and the gradient
  // reduce-scatter, none hidden. A checkpointed recomputation fetches the weights again and
  // releases those whose next use, the layer's own backward, lies more than 1e9 parameters
  // away (stage3_max_reuse_distance): twice the weights after the module in the layer.
  // A GPT-3 2.7B-shaped layer (12 h^2 = 79M) keeps every module: recomputation adds nothing.
  const std::string small = R"({"name": "gpt3-2.7b-shape", "num_layers": 32, "hidden_size": 2560,
      "num_attention_heads": 32, "ffn_hidden_size": 10240, "vocab_size": 51200,
      "activation": "gelu", "normalization": "layernorm", "tied_embeddings": true})";
  const Job plain = deepspeed_zero3_job(small, "none");
  const double gather_s = deepspeed_layer_collective_s(plain, Collective::AllGather, 5e7);
  const double reduce_s = deepspeed_layer_collective_s(plain, Collective::ReduceScatter, 5e8);
  const double layers = static_cast<double>(plain.model.num_layers);
  const double fsdp_none = estimate_step(plain).breakdown.fsdp_comm;
  EXPECT_NEAR(fsdp_none, layers * (2 * gather_s + reduce_s), 0.01 * fsdp_none);
  EXPECT_NEAR(estimate_step(deepspeed_zero3_job(small, "full")).breakdown.fsdp_comm, fsdp_none,
              1e-9 * fsdp_none);

  // GPT-3 175B (h 12288): query-key-value (3 h^2), the output projection (h^2) and the first
  // MLP projection (4 h^2) are reused 2.7e9, 2.4e9 and 1.2e9 parameters later and gathered
  // again; the last projection (4 h^2), reused at once, is kept: 8/12 of a layer.
  const Job big = deepspeed_zero3_job("gpt3-175b", "none");
  const double big_gather_s = deepspeed_layer_collective_s(big, Collective::AllGather, 5e7);
  const double regathers = static_cast<double>(big.model.num_layers) * 8.0 / 12.0 * big_gather_s;
  EXPECT_NEAR(estimate_step(deepspeed_zero3_job("gpt3-175b", "full")).breakdown.fsdp_comm -
                  estimate_step(big).breakdown.fsdp_comm,
              regathers, 0.01 * regathers);
}

TEST(StepModel, DeepSpeedZero1GathersTheUpdatedWeightsUnoverlapped) {
  // ZeRO-1/2 in DeepSpeed all-gather the updated 16-bit weights after the optimizer step,
  // before the next forward, with no overlap (FrameworkTraits::overlap_param_gather false):
  // the whole gather is exposed.
  const std::string plan = R"({"tp": 1, "micro_batch_size": 2, "zero_stage": 1})";
  const Job job = make_job("llama2-7b", "dgx-a100-80gb", 2, 32, 2048, plan, "deepspeed", "fp16");
  const double params = static_cast<double>(job.model.total_params(2048));
  const double gather_s =
      collective_cost(job.cluster.node, Collective::AllGather,
                      place_group(job.plan, job.cluster.node, {"dp"}), 2 * params)
          .time_s;
  EXPECT_GE(estimate_step(job).breakdown.dp_comm, 0.99 * gather_s);
}

TEST(StepModel, UnfusedAdamMovesThreeTimesTheBytesOfAFusedOne) {
  // Composer's DecoupledAdamW, one kernel per elementwise op, plus norm clipping: 100 bytes
  // per parameter; a fused AdamW step over FSDP's fp32 parameters (torchtitan): 32.
  const std::string plan = R"({"tp": 1, "zero_stage": 3})";
  const double foundry =
      estimate_step(make_job("llama2-7b", "dgx-h100", 1, 64, 4096, plan, "llm-foundry"))
          .breakdown.optimizer;
  const double titan =
      estimate_step(make_job("llama2-7b", "dgx-h100", 1, 64, 4096, plan, "torchtitan"))
          .breakdown.optimizer;
  ASSERT_GT(titan, 0.0);
  EXPECT_NEAR(foundry / titan, 100.0 / 32.0, 1e-6);
}

TEST(StepModel, DeepSpeedBf16AddsEachMicroBatchsGradientsIntoFp32) {
  // BF16_Optimizer's update_hp_grads after every micro-batch: 2 + 4 + 4 bytes per parameter
  // at the memory-bound kernels' bandwidth; fp16 accumulates in .grad during backward.
  auto job = [](const char* precision) {
    std::string text = R"({"framework": "megatron-deepspeed", "model": "llama2-7b",
        "cluster": {"node": "dgx-a100-80gb", "num_gpus": 1},
        "training": {"global_batch_size": 8, "seq_length": 2048, "precision": ")";
    text += precision;
    text += R"("}, "plan": {"tp": 1, "pp": 1, "micro_batch_size": 1, "recompute": "full"}})";
    return parse_job(parse_json(text, "job.json"), "job.json", "");
  };
  const Job bf16 = job("bf16");
  const Job fp16 = job("fp16");
  const auto& gpu = bf16.cluster.node.gpu;
  const double params = static_cast<double>(bf16.model.total_params(2048));
  const double bandwidth =
      gpu.hbm_bandwidth_gbps * 1e9 * gpu.hbm_efficiency *
      framework_traits(bf16.framework, bf16.training, bf16.plan).memory_kernel_bandwidth_fraction;
  const double expected = 8 * params * 10 / bandwidth;
  const double delta =
      estimate_step(bf16).breakdown.compute - estimate_step(fp16).breakdown.compute;
  EXPECT_NEAR(delta, expected, 1e-3 * expected);
}

// Zero-bubble schedules defer the weight gradients (W): the layer model reports the time of
// exactly the weight-gradient GEMMs, here of Llama-3.1-8B at tp=1 (QKV, attention output,
// SwiGLU FC1 of width 2f, FC2; each GEMM (k x n) from T = 4096 rows), which is well under half
// the backward (the input-gradient GEMMs, attention and the kernels stay in B); the
// embedding's backward is its weight gradient only.
TEST(StepModel, WeightGradientPartIsTheWgradGemms) {
  const Job job = make_job("llama3.1-8b", "dgx-h100", 1, 16, 4096,
                           R"({"tp": 1, "pp": 2, "schedule": "zero-bubble"})");
  const LayerTimes layers = compute_layer_times(job);
  const ModelSpec& m = job.model;
  const GpuSpec& gpu = job.cluster.node.gpu;
  auto wgrad = [&](int64_t n, int64_t k) {
    return gemm_time_s(gpu, GemmShape{k, n, 4096, 1}, Precision::Bf16);
  };
  const int64_t h = m.hidden_size;
  const int64_t f = m.ffn_hidden_size;
  const double expected = wgrad(m.query_width() + 2 * m.kv_width(), h) + wgrad(h, m.query_width()) +
                          wgrad(2 * f, h) + wgrad(h, f);
  EXPECT_NEAR(layers.dense.backward_weight, expected, 1e-12 * expected);
  EXPECT_GT(layers.dense.backward_weight, 0.25 * layers.dense.backward.compute);
  EXPECT_LT(layers.dense.backward_weight, 0.45 * layers.dense.backward.compute);
  EXPECT_GT(layers.embedding.backward_weight, 0.0);
  EXPECT_EQ(layers.embedding.backward_weight, layers.embedding.backward.compute);
}

TEST(StepModel, ModelFlopsMatchNarayananFormula) {
  // Narayanan et al. 2021 eq. 3 without recomputation: 72 B s l h^2 (1 + s/(6h) + V/(12 l h))
  // counts full (non-causal) attention; ours counts causal attention (half the score work).
  const Job job = make_job("gpt3-175b", "dgx-a100-80gb", 48, 1536, 2048, R"({"tp": 8, "pp": 12})");
  const StepEstimate e = estimate_step(job);
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  const double dense = 72 * B * s * l * h * h * (1 + V / (12 * l * h));
  const double causal_attention = 72 * B * s * l * h * h * (s / (6 * h)) * 0.5;
  EXPECT_NEAR(e.model_flops / (dense + causal_attention), 1.0, 0.01);
}

}  // namespace
}  // namespace parplan::cost
