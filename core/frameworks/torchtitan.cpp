// torchtitan: PyTorch's reference trainer (FSDP2, DTensor tensor parallelism, pipeline
// schedules, eager modules). The job's "framework": "torchtitan".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"
#include "core/frameworks/mixed_precision.h"

namespace parplan::frameworks {

namespace {
constexpr std::string_view kExportFormats[] = {"torchtitan"};
FrameworkTraits torchtitan_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kTorchtitan = {
    .framework = Framework::Torchtitan,
    .name = "torchtitan",
    .summary =
        "torchtitan: FSDP2, DTensor tensor parallelism, pipeline schedules, SDPA "
        "attention, eager PyTorch modules",
    .sources =
        "torchtitan's job config defaults (pipeline_parallel_microbatches, compile off, "
        "op-level selective checkpointing) and loss on .float() logits; PyTorch SDPA "
        "flash backend (FlashAttention-2); PyTorch DTensor",
    // Operator-level selective activation checkpointing (its train configs, e.g.
    // torchtitan/models/llama3/train_configs/llama3_8b.toml: [activation_checkpoint] mode =
    // "selective", selective_ac_option = "op"; FrameworkTraits::operator_level_selective_
    // recompute gives "selective" that meaning), FSDP2 sharding (ZeRO stage 3), sequence
    // parallelism with tp, and the local batch as one micro-batch, or
    // pipeline_parallel_microbatches = pp micro-batches when pipelining.
    .plan_defaults = {.recompute = Recompute::Selective,
                      .zero_stage = 3,
                      .sequence_parallel_with_tp = true,
                      .micro_batch_size = MicroBatchDefault::LocalBatchSplitOverPp},
    // FSDP2 (or DDP), tp with sequence parallelism, pipeline schedules, context parallelism,
    // expert parallelism. No zero-bubble: the planner's is ZB-H1, one chunk per stage, and
    // torchtitan's zero-bubble schedules (InterleavedZeroBubble, ZBVZeroBubble) are multi-stage
    // ones that need at least two chunks per rank (the export refuses ZB-H1,
    // launch_torchtitan.cpp).
    .planner_support = {.zero_stages = zero_stage_set({0, 3}),
                        .schedules = schedule_set({ScheduleKind::OneFOneB,
                                                   ScheduleKind::Interleaved, ScheduleKind::Gpipe}),
                        .ddp_only_alone = true,
                        .ep_within_sharded_ranks = true,
                        // v0.2.2 runs experts with tp, or with etp 1 when ep > 1
                        // (ParallelDims: "Currently we only support ETP=TP or ETP=1";
                        // apply_moe_ep_tp without ep).
                        .expert_tp_one_or_tp = true,
                        .explicit_layer_split = true},
    .cost_traits = torchtitan_cost_traits,
    .export_formats = kExportFormats,
};

namespace {

// FSDP2, SDPA flash attention, operator-level selective checkpointing,
// loss = cross_entropy(pred.flatten(0, 1).float(), labels).
FrameworkTraits torchtitan_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  fsdp_mixed_precision(t);
  t.pp_scatter_gather = false;
  t.logits_bytes_per_element = 10;
  t.operator_level_selective_recompute = true;
  t.fsdp_unsharded_with_pp = true;
  // Data parallelism alone runs DDP (replicate) with 100 MiB buckets of fp32 gradients
  // (v0.2.2 models/llama3/infra/parallelize.py apply_ddp: bucket_cap_mb=100); FSDP2 (a stage
  // kept gathered under pp) reduces per FSDP unit, a transformer block.
  t.dp_bucket_params = 100.0 * 1024 * 1024 / t.grad_bytes;
  t.dp_bucket_params_per_rank = 0;
  t.dp_bucket_first_chunk_only = false;
  t.dp_collectives_per_layer_when_sharded = true;
  t.attention_kernel_native = false;  // PyTorch SDPA flash backend (FlashAttention-2)
  // DTensor tensor parallelism over plain nn.Linear: autograd computes a linear's input
  // and weight gradients in one node and only then runs the redistribution collective, so
  // nothing hides the backward TP communication (Megatron's
  // LinearWithGradAccumulationAndAsyncCommunication issues it before the weight-gradient
  // GEMM); async TP is a separate opt-in (tp_comm_overlap).
  t.tp_backward_overlap = false;
  // Eager PyTorch modules (torch.compile is off by default in torchtitan). Compiled
  // (training.torch_compile), each TransformerBlock is one torch.compile region (torchtitan
  // apply_compile, "per-TransformerBlock compile"): Inductor fuses each norm, the rotary
  // embedding and SwiGLU into single kernels, which move the bytes of a fused kernel.
  t.eager_modules_compilable = true;
  if (!training.compiles_model()) {
    t.norm_traffic_factor = 9.0;
    t.rope_traffic_factor = 5.0;
    t.activation_traffic_factor = 1.7;
  }
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
