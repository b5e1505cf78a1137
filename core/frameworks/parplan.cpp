// parplan's own executor (`parplan run`, executor/): what `validate --run` predicts. The job's
// "framework": "parplan".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"

namespace parplan::frameworks {

namespace {
FrameworkTraits parplan_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kParplan = {
    .framework = Framework::Parplan,
    .name = "parplan",
    .choice_note = "parplan's own executor",
    .summary =
        "parplan's executor: the job's precision as storage, blocking collectives, "
        "kernels measured by `parplan profile`",
    .sources = "executor/ (this repository)",
    // executor/: dp, tp with sp, pp (gpipe, 1f1b, interleaved), ZeRO-1.
    .planner_support = {.cp = false,
                        .ep = false,
                        .zero_stages = zero_stage_set({0, 1}),
                        .schedules =
                            schedule_set({ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                                          ScheduleKind::Gpipe})},
    .cost_traits = parplan_cost_traits,
};

namespace {

// The job's precision as storage (fp32 weights, gradients and AdamW moments: 4 + 4 + 8
// bytes), flash-style attention memory (log-sum-exp kept), blocking collectives that overlap
// nothing, no dropout, its own allocation tracking (no CUDA context or allocator reserve
// counted).
FrameworkTraits parplan_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  t.weight_bytes = activation_bytes(training.precision);
  t.grad_bytes = t.weight_bytes;
  t.optimizer_bytes = 2 * t.weight_bytes;
  t.grad_reduce_bytes = t.weight_bytes;
  t.overlap_dp_grad_reduce = false;
  t.overlap_param_gather = false;
  t.dp_bucket_params = 0;  // one all-reduce of the whole gradient buffer (executor/trainer.cpp)
  t.dp_bucket_params_per_rank = 0;
  t.tp_backward_overlap = false;
  t.cp_shards_optimizer = false;
  t.model_dropout = false;
  t.logits_bytes_per_element = 2 * activation_bytes(training.precision);
  t.workspace_gib = 0;
  t.allocator_fragmentation = 0;
  t.pytorch_caching_allocator = false;
  // Its kernels are measured by `parplan profile` (kernel_gbps); the rest stream.
  t.memory_kernel_bandwidth_fraction = 1.0;
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
