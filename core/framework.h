// The training software a plan is meant for (contract §1 "framework"). What each one implies
// for the cost model (overlaps, kernels, defaults) lives in cost_models/framework_traits.h.
#pragma once

#include <optional>
#include <string_view>

namespace parplan {

enum class Framework {
  MegatronCore,  // also NeMo, Megatron-Bridge
  MegatronLm,    // Megatron-LM before Megatron-Core
  MegatronDeepspeed,
  Deepspeed,
  Torchtitan,
  LlmFoundry,
  Maxtext,
  Other,
  Parplan,  // parplan's own executor (`parplan run`): what validate --run predicts
};

const char* to_string(Framework framework);
std::optional<Framework> parse_framework(std::string_view text);
// The contract's spellings, for error messages.
const char* framework_choices();

}  // namespace parplan
