// DeepSpeed: ZeRO data parallelism and the pipeline engine, without Megatron tensor
// parallelism. The job's "framework": "deepspeed".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"

namespace parplan::frameworks {

namespace {
FrameworkTraits deepspeed_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kDeepspeed = {
    .framework = Framework::Deepspeed,
    .name = "deepspeed",
    .summary =
        "DeepSpeed ZeRO and its pipeline engine with 2021-era kernels (no flash "
        "attention, no tensor parallelism)",
    .sources =
        "Rajbhandari et al. 2020, ZeRO, section 3; DeepSpeed PipelineEngine "
        "(deepspeed/runtime/pipe/engine.py); reduce_bucket_size 5e8",
    // ZeRO data parallelism and the pipeline engine; no Megatron tensor parallelism.
    .planner_support = {.tp = false,
                        .cp = false,
                        .sp = false,
                        .vpp = false,
                        .schedules = schedule_set({ScheduleKind::OneFOneB})},
    .cost_traits = deepspeed_cost_traits,
};

namespace {

// DeepSpeed ZeRO (Rajbhandari et al. 2020): 2 + 2 + 12 bytes/param, overlap_comm and
// parameter prefetch; 2021-era kernels without flash attention.
FrameworkTraits deepspeed_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  t.weight_bytes = 2;
  t.grad_bytes = training.precision == Precision::Fp16 ? 2 : 4;
  t.optimizer_bytes = 12;
  t.grad_reduce_bytes = 2;
  t.flash_attention = false;
  t.pp_scatter_gather = false;
  t.cp_shards_optimizer = false;
  t.pipe_buffers_per_micro_batch = true;
  t.pipeline_p2p_blocking = true;
  t.workspace_gib = 1.0 + 1.9;  // reduce/all-gather buckets (5e8 elements)
  // ZeRO-3 fetches parameters through a prefetch buffer of stage3_prefetch_bucket_size = 5e7
  // parameters and reduces gradients in reduce_bucket_size = 5e8 buckets (DeepSpeed
  // configuration docs, defaults; deepspeed/runtime/zero/config.py): each a collective over
  // all data-parallel ranks.
  t.fsdp_gather_bucket_params = 5e7;
  t.fsdp_reduce_bucket_params = 5e8;
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
