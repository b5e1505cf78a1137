// The cost side of a training framework: framework_traits looks up the FrameworkTraits a
// framework implies for a training setup (core/frameworks/cost_traits.h, the values in
// core/frameworks/<name>.cpp), and the helpers that combine a trait with a cost-model type
// (the TP group's placement, the GPU). Tested in tests/cost_models/framework_traits_test.cpp
// and step_model_test.cpp.
#pragma once

#include "core/cluster_spec.h"
#include "core/framework.h"
#include "core/frameworks/cost_traits.h"
#include "core/parallel_plan.h"
#include "core/training_spec.h"
#include "cost_models/group_placement.h"

namespace parplan::cost {

// Whether the framework's TP GEMM-communication overlap (userbuffers) applies to this TP
// group: userbuffers exchange chunks through NVLink peer memory, so only a group inside one
// NVLink domain (node) has it (Transformer Engine comm_gemm_overlap; Megatron-Core disables
// tp_comm_overlap for TP across nodes).
bool tp_comm_overlap_applies(const FrameworkTraits& traits, const GroupPlacement& tp_group);

// The framework's description's cost traits for this training setup (the plan does not
// change them). O(1): a table lookup and a small struct, no allocation.
FrameworkTraits framework_traits(Framework framework, const TrainingSpec& training,
                                 const ParallelPlan& plan);

// Whether fp8 training on this GPU uses the MXFP8 (block-scaled) recipe: Blackwell. Other
// GPUs use per-tensor scaling.
bool fp8_recipe_is_mxfp8(const GpuSpec& gpu);

// Whether the plan keeps the parameters themselves in fp8 (FrameworkTraits::fp8_params): only
// with a sharded optimizer, since Megatron refuses fp8 parameter gathers without the
// distributed optimizer or an FSDP (arguments.py: "--fp8-param-gather only supported with
// distributed optimizer, torch fsdp2, megatron fsdp"); without one the 16-bit weights and the
// fp8 copies stay.
bool fp8_params_kept(const FrameworkTraits& traits, const ParallelPlan& plan);

}  // namespace parplan::cost
