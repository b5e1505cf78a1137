// Any other training software: FrameworkTraits' defaults (fused flash attention, overlapped
// data-parallel communication) with Megatron-style mixed precision, and every plan the
// planner can build. The job's "framework": "other".
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"
#include "core/frameworks/mixed_precision.h"

namespace parplan::frameworks {

namespace {
FrameworkTraits other_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kOther = {
    .framework = Framework::Other,
    .name = "other",
    .summary =
        "any other software: fused flash attention, overlapped data-parallel "
        "communication, Megatron-style mixed precision, the contract's plan defaults",
    .sources =
        "core/frameworks/cost_traits.h (each default's source); Megatron-LM "
        "docs/source/distrib_optimizer.md",
    // Other software may dispatch MoE tokens through DeepEP (NeMo AutoModel, DeepSeek's own
    // training system); the batch-level overlap is Megatron-Core's.
    .planner_support = {.moe_flex_dispatcher = true, .explicit_layer_split = true},
    .cost_traits = other_cost_traits,
};

namespace {

FrameworkTraits other_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  megatron_mixed_precision(t, training.precision);
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
