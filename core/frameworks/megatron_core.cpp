// Megatron-Core: NVIDIA's Megatron library with Transformer Engine, as NeMo and Megatron-Bridge
// run it. The job's "framework": "megatron-core" (also "nemo", "megatron-bridge").
// Listed in core/frameworks/registry.cpp; tested in tests/core/frameworks_test.cpp.
#include "core/frameworks/framework_description.h"
#include "core/frameworks/mixed_precision.h"

namespace parplan::frameworks {

namespace {
constexpr std::string_view kAliases[] = {"nemo", "megatron-bridge"};
constexpr std::string_view kExportFormats[] = {"megatron", "nemo"};
FrameworkTraits megatron_core_cost_traits(const TrainingSpec& training);
}  // namespace

extern constexpr FrameworkDescription kMegatronCore = {
    .framework = Framework::MegatronCore,
    .name = "megatron-core",
    .aliases = kAliases,
    .summary = "Megatron-Core with Transformer Engine (NeMo, Megatron-Bridge recipes)",
    .sources =
        "Megatron-LM docs/source/distrib_optimizer.md; NeMo performance recipes "
        "(tp_comm_overlap); NeMo 2 / Megatron-Bridge mixed_precision.py (fp8)",
    // The recipes run the distributed optimizer (ZeRO stage 1) and sequence parallelism
    // whenever tp > 1.
    .plan_defaults = {.zero_stage = 1, .sequence_parallel_with_tp = true},
    // tp/pp/vpp/cp/ep, sequence parallelism, distributed optimizer, Megatron-FSDP,
    // activation offloading (cpu_offloading_num_layers), --recompute-modules.
    .planner_support = {.zero_stages = zero_stage_set({0, 1, 3}),
                        .schedules =
                            schedule_set({ScheduleKind::OneFOneB, ScheduleKind::Interleaved}),
                        .moe_tp_needs_sp = true,
                        .activation_offload = true,
                        .recompute_modules = true},
    .cost_traits = megatron_core_cost_traits,
    .export_formats = kExportFormats,
};

namespace {

// cuDNN/flash fused attention, overlapped gradient reduce-scatter and parameter all-gather
// (distributed optimizer), userbuffer TP overlap (NeMo performance recipes:
// tp_comm_overlap=True).
FrameworkTraits megatron_core_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  megatron_mixed_precision(t, training.precision);
  t.tp_comm_overlap = true;
  if (training.precision == Precision::Fp8) {
    t.fp8_weight_copy_bytes = 2;
    t.fp8_params = true;
    t.fp8_saves_gemm_inputs = true;
  }
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
