// llm-foundry: MosaicML's trainer of MPT-style models on Composer and PyTorch FSDP. The job's
// "framework": "llm-foundry".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"
#include "core/frameworks/mixed_precision.h"

namespace parplan::frameworks {

namespace {
FrameworkTraits llm_foundry_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kLlmFoundry = {
    .framework = Framework::LlmFoundry,
    .name = "llm-foundry",
    .summary =
        "llm-foundry: Composer FSDP, Triton flash attention of FlashAttention-1 design, "
        "unfused DecoupledAdamW, MPT without dropout",
    .sources =
        "mosaicml/llm-foundry scripts/train/benchmarking/submit_benchmarks.py, "
        "llm_foundry/models/layers/flash_attn_triton.py, MPTConfig; Composer "
        "decoupled_weight_decay.py and fsdp_config",
    // Composer FSDP FULL_SHARD (ZeRO stage 3).
    .plan_defaults = {.zero_stage = 3},
    // Composer FSDP (FULL_SHARD, SHARD_GRAD_OP) or DDP; full activation checkpointing.
    .planner_support = {.tp = false,
                        .pp = false,
                        .cp = false,
                        .ep = false,
                        .sp = false,
                        .vpp = false,
                        .zero_stages = zero_stage_set({0, 2, 3}),
                        .selective_recompute = false},
    .cost_traits = llm_foundry_cost_traits,
};

namespace {

// PyTorch FSDP; fp8 through Transformer Engine layers (fc_type: te,
// scripts/train/benchmarking/submit_benchmarks.py). Its benchmark scripts run
// attn_impl 'triton' (submit_benchmarks.py default): flash_attn_triton, Tri Dao's
// FlashAttention-1-design Triton kernel on triton_pre_mlir, "only tested on A100"
// (llm_foundry/models/layers/flash_attn_triton.py header). The default loss is
// flash-attn's fused cross entropy (loss_fn: fused_crossentropy), which reads the 16-bit
// logits and writes their gradient in place: 2 bytes per logit.
FrameworkTraits llm_foundry_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  fsdp_mixed_precision(t);
  t.fp8_saves_gemm_inputs = training.precision == Precision::Fp8;
  t.pp_scatter_gather = false;
  t.logits_bytes_per_element = 2;
  t.attention_kernel_native = false;
  t.attention_kernel_fa1_design = true;
  t.fsdp_backward_prefetch_post = true;  // Composer's FSDP default
  // MPT, its model, defaults to no dropout anywhere (MPTConfig: emb_pdrop, resid_pdrop
  // and attn_config.attn_pdrop all 0.0).
  t.model_dropout = false;
  // Composer's DecoupledAdamW runs one PyTorch kernel per elementwise op and parameter
  // (composer/optim/decoupled_weight_decay.py: param.mul_, exp_avg.mul_().add_(),
  // exp_avg_sq.mul_().addcmul_(), sqrt, div, add_, param.addcdiv_): 88 bytes per fp32
  // parameter; norm gradient clipping (the MPT yamls' gradient_clipping) reads the
  // gradients and scales them in place: 12 more.
  t.optimizer_step_bytes_per_param = 100;
  // Without FSDP, Composer wraps the model in PyTorch DDP: 25 MiB gradient buckets (the
  // DistributedDataParallel bucket_cap_mb default); FSDP's SHARD_GRAD_OP (ZeRO 2) reduces
  // per FSDP unit, a transformer block.
  t.dp_bucket_params = 25.0 * 1024 * 1024 / t.grad_bytes;
  t.dp_bucket_params_per_rank = 0;
  t.dp_bucket_first_chunk_only = false;
  t.dp_collectives_per_layer_when_sharded = true;
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
