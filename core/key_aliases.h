// Suggestions by meaning: the names other training software (Megatron-LM/Core, torchtitan,
// DeepSpeed, Hugging Face transformers and PEFT, llm-foundry, torchrun) gives to the job file's
// keys, so that an unknown key such as `cluster.nodes`, `plan.vp` or `training.seq_len` is
// answered with the key that means the same (`num_nodes`, `vpp`, `seq_length`) rather than
// the nearest spelling. Used by nearest_key_hint (core/json_input.h). Tested in
// tests/core/json_input_test.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace parplan {

// The job-file keys `name` is another program's name for, in table order; empty when it is no
// known alias. Case, `-` versus `_` and leading dashes (`--tensor-model-parallel-size`) are
// ignored. A name may stand for keys of several objects (`batch_size`: global_batch_size in
// `training`, micro_batch_size in `plan`); callers keep those the object allows.
std::vector<std::string> key_alias_targets(std::string_view name);

}  // namespace parplan
