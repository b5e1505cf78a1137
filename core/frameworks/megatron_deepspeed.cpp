// Megatron-DeepSpeed: Megatron kernels and tensor parallelism under DeepSpeed's pipeline
// engine and ZeRO (BLOOM, MT-NLG, 2021-2022). The job's "framework": "megatron-deepspeed".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"
#include "core/frameworks/mixed_precision.h"

namespace parplan::frameworks {

namespace {
FrameworkTraits megatron_deepspeed_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kMegatronDeepspeed = {
    .framework = Framework::MegatronDeepspeed,
    .name = "megatron-deepspeed",
    .summary =
        "Megatron-DeepSpeed: Megatron tensor parallelism and kernels without flash "
        "attention, DeepSpeed's pipeline engine and ZeRO (BLOOM, MT-NLG)",
    .sources =
        "Megatron-DeepSpeed examples_deepspeed/rebase/ds_pretrain_gpt_1.3B.sh; DeepSpeed "
        "deepspeed/runtime/pipe/engine.py (BF16_Optimizer); Korthikanti et al. 2022",
    // Its GPT pretraining scripts checkpoint every layer's activations and run DeepSpeed's
    // ZeRO stage 1 (examples_deepspeed/rebase/ds_pretrain_gpt_1.3B.sh:
    // activation_checkpoint="true" -> --checkpoint-activations, zero_stage=1); BLOOM-176B
    // trained the same way.
    .plan_defaults = {.recompute = Recompute::Full, .zero_stage = 1},
    // Megatron tp + DeepSpeed pipeline engine (no interleaving) + ZeRO-1. The 2021-2022
    // code (BLOOM, MT-NLG) checkpoints whole layers only (--checkpoint-activations);
    // selective recomputation came later with Megatron-LM v3 (Korthikanti et al. 2022).
    .planner_support = {.cp = false,
                        .sp = false,
                        .vpp = false,
                        .zero_stages = zero_stage_set({0, 1}),
                        .schedules = schedule_set({ScheduleKind::OneFOneB}),
                        .selective_recompute = false},
    .cost_traits = megatron_deepspeed_cost_traits,
};

namespace {

// Megatron kernels without flash attention; the DeepSpeed pipeline engine reduces gradients
// after the pipeline flush.
FrameworkTraits megatron_deepspeed_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  megatron_mixed_precision(t, training.precision);
  t.flash_attention = false;
  t.overlap_dp_grad_reduce = false;
  t.overlap_param_gather = false;
  t.cp_shards_optimizer = false;
  t.tp_backward_overlap = false;
  t.pipe_buffers_per_micro_batch = true;
  t.pipeline_p2p_blocking = true;
  // bf16 goes through DeepSpeed's BF16_Optimizer: fp32 gradients for every parameter plus
  // the bf16 .grad it does not free between micro-batches (deepspeed/runtime/pipe/
  // engine.py _exec_backward_pass: update_hp_grads(clear_lp_grads=False)).
  if (training.precision == Precision::Bf16) {
    t.low_precision_grad_copy_bytes = 2;
    t.grad_accumulation_bytes_per_micro_batch = 2 + 4 + 4;
  }
  // DeepSpeed's gradient reduction bucket (reduce_bucket_size 5e8 elements, fp32 in the
  // bf16 optimizer: 1.9 GiB) beside the CUDA context, cuBLAS and NCCL buffers.
  t.workspace_gib = 1.0 + 1.9;
  // Its gradient reduction moves the same 5e8-element buckets, one collective each.
  t.dp_bucket_params = 5e8;
  t.dp_bucket_params_per_rank = 0;
  t.dp_bucket_first_chunk_only = false;
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
