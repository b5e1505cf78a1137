#include "cost_models/framework_traits.h"

#include "core/frameworks/registry.h"

namespace parplan::cost {

bool fp8_recipe_is_mxfp8(const GpuSpec& gpu) { return gpu.architecture == "blackwell"; }

bool fp8_params_kept(const FrameworkTraits& traits, const ParallelPlan& plan) {
  return traits.fp8_params && plan.zero_stage >= 1;
}

bool tp_comm_overlap_applies(const FrameworkTraits& traits, const GroupPlacement& tp_group) {
  return traits.tp_comm_overlap && !tp_group.crosses_nodes();
}

FrameworkTraits framework_traits(Framework framework, const TrainingSpec& training,
                                 const ParallelPlan& /*plan*/) {
  FrameworkTraits traits = framework_info(framework).cost_traits(training);
  // training.grad_reduce_in_fp32 = false: Megatron's main-gradient buffer (fp32 beside
  // 16-bit weights) and its reduction take the 16-bit dtype instead (Megatron-Core
  // DistributedDataParallelConfig.grad_reduce_in_fp32; NeMo scripts/performance set it false
  // for fp8, Megatron-Bridge perf recipes _perf_precision for every dtype).
  const bool sixteen_bit =
      training.precision == Precision::Bf16 || training.precision == Precision::Fp8;
  if (training.grad_reduce_in_fp32 == false && sixteen_bit && traits.weight_bytes == 2 &&
      traits.grad_bytes == 4) {
    traits.grad_bytes = 2;
    traits.grad_reduce_bytes = 2;
  }
  // PyTorch's expandable segments, where the framework allocates through PyTorch. Not a
  // framework default: torchtitan's run_train.sh sets it (pytorch/torchtitan a5e57e4a9,
  // 2024-10-22), but its December 2024 benchmark peaks, launcher unstated, are predicted
  // with the fragmentation reserve (docs/job_file.md).
  traits.expandable_segments =
      traits.pytorch_caching_allocator && training.expandable_segments.value_or(false);
  return traits;
}

}  // namespace parplan::cost
