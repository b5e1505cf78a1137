// Megatron-LM of 2019-2022, before Megatron-Core: the job's "framework": "megatron-lm".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"
#include "core/frameworks/mixed_precision.h"

namespace parplan::frameworks {

namespace {
constexpr std::string_view kExportFormats[] = {"megatron"};
FrameworkTraits megatron_lm_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kMegatronLm = {
    .framework = Framework::MegatronLm,
    .name = "megatron-lm",
    .summary =
        "Megatron-LM 2019-2022, before Megatron-Core: fused softmax over the full "
        "attention scores, gradient all-reduce after the backward pass",
    .sources =
        "Shoeybi et al. 2019; Narayanan et al. 2021; Megatron-LM "
        "docs/distrib_optimizer.md and p2p_communication.py of that time",
    // Megatron-LM v1 (2019-2020, no pipeline parallelism) ran each GPU's batch in one pass;
    // from v2 (pipelining) one sequence per micro-batch is the usual setting.
    .plan_defaults = {.micro_batch_size = MicroBatchDefault::LocalBatchWithoutPipelining},
    // Megatron-LM 2019-2022: no context or expert parallelism yet.
    .planner_support = {.cp = false,
                        .ep = false,
                        .zero_stages = zero_stage_set({0, 1}),
                        .schedules =
                            schedule_set({ScheduleKind::OneFOneB, ScheduleKind::Interleaved})},
    .cost_traits = megatron_lm_cost_traits,
    .export_formats = kExportFormats,
};

namespace {

// Megatron-LM 2020-2021 (Shoeybi et al. 2019; Narayanan et al. 2021): fused
// scale-mask-softmax over the full score matrix, gradient all-reduce after backward.
FrameworkTraits megatron_lm_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  megatron_mixed_precision(t, training.precision);
  t.flash_attention = false;
  t.overlap_dp_grad_reduce = false;
  t.overlap_param_gather = false;
  // After the backward pass, one all-reduce (or, with the distributed optimizer, one
  // reduce-scatter) of each contiguous gradient buffer (Megatron-LM 2020-2022
  // DistributedDataParallel.allreduce_gradients over its _grad_buffers).
  t.dp_bucket_params = 0;
  t.dp_bucket_params_per_rank = 0;
  t.cp_shards_optimizer = false;
  t.tp_backward_overlap = false;
  t.pipeline_p2p_blocking = true;
  t.param_gather_in_grad_dtype = true;
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
