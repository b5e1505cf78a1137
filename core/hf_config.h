// Imports a Hugging Face transformers `config.json` (Llama, Mistral, Mixtral, Qwen2/Qwen2-MoE,
// Qwen3/Qwen3-MoE, GPT-2, BLOOM, DeepSeek-V2/V3 style keys) as a ModelSpec. Unknown keys are
// ignored (config files carry many unrelated ones); the keys used are checked strictly.
// Tested in tests/core/hf_config_test.cpp on real config files in tests/data/hf/.
#pragma once

#include <string>

#include "core/json_input.h"
#include "core/model_spec.h"

namespace parplan {

// True when the object looks like a Hugging Face config (has "architectures" or "model_type").
bool is_hf_config(const Json& object);

ModelSpec import_hf_config(const Json& object, const std::string& file);

}  // namespace parplan
