#include "cost_models/framework_traits.h"

#include "core/frameworks/registry.h"

namespace parplan::cost {

bool fp8_recipe_is_mxfp8(const GpuSpec& gpu) { return gpu.architecture == "blackwell"; }

bool fp8_params_apply(const FrameworkTraits& traits, const GpuSpec& gpu) {
  return traits.fp8_params && !fp8_recipe_is_mxfp8(gpu);
}

bool tp_comm_overlap_applies(const FrameworkTraits& traits, const GroupPlacement& tp_group) {
  return traits.tp_comm_overlap && !tp_group.crosses_nodes();
}

FrameworkTraits framework_traits(Framework framework, const TrainingSpec& training,
                                 const ParallelPlan& /*plan*/) {
  return framework_info(framework).cost_traits(training);
}

}  // namespace parplan::cost
