// The two mixed-precision layouts the framework descriptions share: how many bytes per
// parameter the weights, gradients and optimizer state take, and what goes over the wire.
// Megatron-style (Megatron-LM, Megatron-Core, Megatron-DeepSpeed) and FSDP-style (torchtitan,
// llm-foundry, MaxText). Tested in tests/core/frameworks_test.cpp.
#pragma once

#include "core/cluster_spec.h"
#include "core/frameworks/cost_traits.h"

namespace parplan {

// Megatron-style mixed precision (Megatron-LM docs/source/distrib_optimizer.md, "Data flow"
// table): fp16 runs keep fp16 gradients and an fp32 copy inside the optimizer (2 + 2 + 16
// = 20 bytes/param); bf16 runs accumulate gradients in fp32 (2 + 4 + 12 = 18 bytes/param).
void megatron_mixed_precision(FrameworkTraits& t, Precision precision);

// FSDP-style mixed precision (torchtitan, llm-foundry, MaxText): sharded fp32 parameters,
// fp32 gradients and Adam moments (4 + 4 + 8 = 16 bytes/param, all sharded); 16-bit copies
// exist only while a layer is gathered.
void fsdp_mixed_precision(FrameworkTraits& t);

}  // namespace parplan
