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
                        .recompute_modules = true,
                        .moe_flex_dispatcher = true,
                        .moe_a2a_overlap = true,
                        .explicit_layer_split = true},
    .cost_traits = megatron_core_cost_traits,
    .export_formats = kExportFormats,
};

namespace {

// cuDNN/flash fused attention, overlapped gradient reduce-scatter and parameter all-gather
// (distributed optimizer), userbuffer TP overlap (NeMo performance recipes:
// tp_comm_overlap=True). Expert parallelism across nodes dispatches through the flex
// dispatcher with DeepEP: Megatron-Core's MoE README lists "--moe-token-dispatcher-type flex
// --moe-flex-dispatcher-backend deepep" among the "general performance flags that can help to
// achieve higher performance on almost all workloads" and names DeepEP the dispatcher for
// "cross-node EP"; the published cross-node recipes (Megatron-MoE-ModelZoo's Qwen3 and
// DeepSeek-V3 runs on H100, Megatron-Bridge's DeepSeek-V3 and Qwen3-30B-A3B perf recipes) run
// DeepEP or HybridEP.
FrameworkTraits megatron_core_cost_traits(const TrainingSpec& training) {
  FrameworkTraits t;
  megatron_mixed_precision(t, training.precision);
  t.tp_comm_overlap = true;
  t.moe_dedup_dispatch_across_nodes = true;
  t.moe_combine_keeps_expert_outputs = false;
  t.pipeline_p2p_blocking_without_interleaving = true;
  if (training.precision == Precision::Fp8) {
    t.fp8_weight_copy_bytes = 2;
    t.fp8_params = true;
    t.fp8_saves_gemm_inputs = true;
  }
  return t;
}

}  // namespace

}  // namespace parplan::frameworks
