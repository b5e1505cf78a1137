// The training software a plan is meant for (the job key `framework`, docs/job_file.md). Everything
// each one implies (names, plan defaults, what the planner proposes, cost traits) is in its
// description, core/frameworks/<name>.cpp, looked up through core/frameworks/registry.h. Tested in
// tests/core/frameworks_test.cpp.
#pragma once

#include <cstddef>
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
  Parplan,  // parplan's own executor (`parplan run`): what validate --run predicts; stays last
};

inline constexpr std::size_t kFrameworkCount = static_cast<std::size_t>(Framework::Parplan) + 1;

// The job's spelling of the framework ("megatron-core").
const char* to_string(Framework framework);
// A name or alias of a framework ("nemo" is Megatron-Core); nullopt for none.
std::optional<Framework> parse_framework(std::string_view text);
// The accepted spellings, for error messages.
const char* framework_choices();

}  // namespace parplan
