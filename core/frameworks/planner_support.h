// PlannerSupport: which plans a training framework can launch, as plain data: the parallel
// dimensions, ZeRO stages, pipeline schedules and recomputation modes it implements. The
// planner proposes only such plans (planner/framework_support.h turns this into its rejection
// tags); `simulate` still predicts any plan the user gives. Each framework's values are in
// core/frameworks/<name>.cpp. Tested in tests/planner/framework_support_test.cpp.
#pragma once

#include <initializer_list>

#include "core/parallel_plan.h"

namespace parplan {

// A set of ZeRO stages (0-3), as bits.
constexpr unsigned zero_stage_set(std::initializer_list<int> stages) {
  unsigned bits = 0;
  for (int stage : stages) bits |= 1u << stage;
  return bits;
}

// A set of pipeline schedules, as bits.
constexpr unsigned schedule_set(std::initializer_list<ScheduleKind> schedules) {
  unsigned bits = 0;
  for (ScheduleKind schedule : schedules) bits |= 1u << static_cast<int>(schedule);
  return bits;
}

struct PlannerSupport {
  // Parallel dimensions above 1 (sp: sequence parallelism; vpp: interleaved model chunks).
  bool tp = true, pp = true, cp = true, ep = true, sp = true, vpp = true;
  unsigned zero_stages = zero_stage_set({0, 1, 2, 3});
  // Schedules of plans with pp > 1.
  unsigned schedules =
      schedule_set({ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::Gpipe,
                    ScheduleKind::ZeroBubble, ScheduleKind::DualPipe});
  bool selective_recompute = true;
  // MoE with tensor parallelism only with sequence parallelism (Megatron-Core
  // transformer_config.py: "When using MoE and tensor parallelism, sequence parallelism must
  // be used"): the router and the token dispatch work on each rank's own sequence shard.
  bool moe_tp_needs_sp = false;
  // Activation offloading to host memory (ParallelPlan::offload_activation_layers):
  // Megatron-Core's cpu_offloading.
  bool activation_offload = false;
  // Megatron's per-module recomputation (ParallelPlan::recompute_modules).
  bool recompute_modules = false;
  // MoE dispatch through DeepEP or HybridEP (ParallelPlan::moe_dispatcher) and the batch-level
  // all-to-all overlap (ParallelPlan::moe_a2a_overlap): Megatron-Core's flex dispatcher and
  // --overlap-moe-expert-parallel-comm.
  bool moe_flex_dispatcher = false;
  bool moe_a2a_overlap = false;
  // ZeRO stage 0 (replicated data parallelism, DDP) only as the sole parallelism: with dp > 1
  // and tp, pp or cp above 1, sharded data parallelism instead (torchtitan's parallelize.py:
  // "DDP has not supported > 1D parallelism").
  bool ddp_only_alone = false;
  // Expert parallelism takes its ranks from the FSDP-sharded data-parallel ranks, the context-
  // parallel ranks and, for experts without tensor parallelism, the tensor-parallel ranks
  // (torchtitan's ParallelDims: v0.2.2's sparse mesh pp x dp_replicate x efsdp x ep x etp over
  // the same ranks as dp_shard x cp x tp; main: "expert_parallel_degree must divide dp_shard *
  // cp * tp"): ep must divide that pool (expert_parallel_rank_pool).
  bool ep_within_sharded_ranks = false;
  // Expert tensor parallelism (ParallelPlan::expert_tp) is the dense layers' tp, or 1 with
  // expert parallelism: torchtitan v0.2.2's ParallelDims._validate ("Currently we only support
  // ETP=TP or ETP=1" when ep > 1), and without expert parallelism its apply_moe_ep_tp puts the
  // experts on the tensor-parallel mesh whatever etp says.
  bool expert_tp_one_or_tp = false;
  // Any count of layers per model chunk (ParallelPlan::layers_per_stage): Megatron-Core's
  // --pipeline-model-parallel-layout, torchtitan's module_fqns_per_model_part.
  bool explicit_layer_split = false;

  constexpr bool allows_zero_stage(int stage) const { return (zero_stages >> stage) & 1u; }
  constexpr bool allows_schedule(ScheduleKind schedule) const {
    return (schedules >> static_cast<int>(schedule)) & 1u;
  }
  constexpr bool rejects_ddp_beside(const ParallelPlan& plan) const {
    return ddp_only_alone && plan.zero_stage == 0 && plan.dp > 1 && plan.tp * plan.pp * plan.cp > 1;
  }
  bool rejects_ep_outside_sharded_ranks(const ParallelPlan& plan) const {
    return ep_within_sharded_ranks && plan.ep > 1 && expert_parallel_rank_pool(plan) % plan.ep != 0;
  }
  bool rejects_expert_tp(const ParallelPlan& plan) const {
    const int64_t etp = plan.expert_tp();
    return expert_tp_one_or_tp && etp != plan.tp && (plan.ep == 1 || etp != 1);
  }
  // The ranks ep_within_sharded_ranks takes experts from: FSDP's shard group (ZeRO 2 and 3;
  // 1 for replicated data parallelism) x cp x (tp when experts have no tensor parallelism).
  static int64_t expert_parallel_rank_pool(const ParallelPlan& plan) {
    const int64_t shard = plan.zero_stage >= 2 ? plan.effective_zero_shard() : 1;
    return shard * plan.cp * (plan.expert_tp() == 1 ? plan.tp : 1);
  }
  // The plan of a MoE model (when `moe_model`) breaks moe_tp_needs_sp.
  constexpr bool rejects_moe_without_sp(const ParallelPlan& plan, bool moe_model) const {
    return moe_tp_needs_sp && moe_model && plan.tp > 1 && !plan.sequence_parallel;
  }
};

}  // namespace parplan
