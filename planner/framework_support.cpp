#include "planner/framework_support.h"

#include "core/frameworks/registry.h"

namespace parplan::planner {

std::optional<std::string_view> unsupported_by_framework(Framework framework, const ParallelPlan& p,
                                                         bool moe_model) {
  const PlannerSupport& s = framework_info(framework).planner_support;
  if (!s.tp && p.tp > 1) return "framework-no-tp";
  if (!s.pp && p.pp > 1) return "framework-no-pp";
  if (!s.cp && p.cp > 1) return "framework-no-cp";
  if (!s.ep && p.ep > 1) return "framework-no-ep";
  if (!s.sp && p.sequence_parallel) return "framework-no-sp";
  if (!s.vpp && p.vpp > 1) return "framework-no-vpp";
  if (!s.allows_zero_stage(p.zero_stage)) return "framework-zero-stage";
  if (s.rejects_ddp_beside(p)) return "framework-ddp-beside-model-parallelism";
  // Expert tensor parallelism first: the expert-parallel rank pool assumes etp 1 or tp.
  if (s.rejects_expert_tp(p)) return "framework-expert-tp";
  if (s.rejects_ep_outside_sharded_ranks(p)) return "framework-ep-outside-sharded-ranks";
  if (p.pp > 1 && !s.allows_schedule(p.schedule)) return "framework-schedule";
  if (!s.selective_recompute && p.recompute == Recompute::Selective) return "framework-recompute";
  if (!s.activation_offload && p.offload_activation_layers > 0) return "framework-offload";
  if (!s.recompute_modules && p.recompute_modules != 0) return "framework-recompute-modules";
  if (!s.moe_flex_dispatcher && is_flex_dispatcher(p.moe_dispatcher)) {
    return "framework-moe-dispatcher";
  }
  if (!s.moe_a2a_overlap && p.moe_a2a_overlap) return "framework-a2a-overlap";
  if (!s.explicit_layer_split && !p.layers_per_stage.empty()) return "framework-layer-split";
  if (s.rejects_moe_without_sp(p, moe_model)) {
    return "framework-moe-needs-sp";
  }
  return std::nullopt;
}

}  // namespace parplan::planner
