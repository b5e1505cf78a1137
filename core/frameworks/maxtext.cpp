// MaxText: Google's JAX/XLA trainer, sharding over data, fsdp, tensor, sequence, expert and
// pipeline axes. The job's "framework": "maxtext".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"
#include "core/frameworks/mixed_precision.h"

namespace parplan::frameworks {

namespace {
FrameworkTraits maxtext_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kMaxtext = {
    .framework = Framework::Maxtext,
    .name = "maxtext",
    .summary =
        "MaxText: JAX/XLA with fused flash attention, fully sharded fp32 state and "
        "compile-time buffer assignment",
    .sources =
        "MaxText's sharding axes (data, fsdp, tensor, sequence, expert, stage); XLA's "
        "compile-time buffer assignment",
    // Fully sharded (fsdp axis: ZeRO stage 3).
    .plan_defaults = {.zero_stage = 3},
    // Sharding over data/fsdp/tensor/sequence/expert axes and a pipeline axis.
    .planner_support = {.sp = false,
                        .zero_stages = zero_stage_set({0, 3}),
                        .schedules =
                            schedule_set({ScheduleKind::OneFOneB, ScheduleKind::Interleaved})},
    .cost_traits = maxtext_cost_traits,
};

namespace {

FrameworkTraits maxtext_cost_traits(const TrainingSpec& /*training*/) {
  FrameworkTraits t;
  fsdp_mixed_precision(t);
  t.pp_scatter_gather = false;
  // XLA assigns buffers at compile time from the whole program's lifetimes (no caching
  // allocator splitting blocks at run time): little fragmentation.
  t.allocator_fragmentation = 0.05;
  t.pytorch_caching_allocator = false;
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
