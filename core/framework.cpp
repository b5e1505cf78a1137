#include "core/framework.h"

#include <array>
#include <utility>

namespace parplan {

namespace {
constexpr std::array<std::pair<Framework, const char*>, 9> kNames = {{
    {Framework::MegatronCore, "megatron-core"},
    {Framework::MegatronLm, "megatron-lm"},
    {Framework::MegatronDeepspeed, "megatron-deepspeed"},
    {Framework::Deepspeed, "deepspeed"},
    {Framework::Torchtitan, "torchtitan"},
    {Framework::LlmFoundry, "llm-foundry"},
    {Framework::Maxtext, "maxtext"},
    {Framework::Other, "other"},
    {Framework::Parplan, "parplan"},
}};
}  // namespace

const char* to_string(Framework framework) {
  for (const auto& [value, name] : kNames) {
    if (value == framework) return name;
  }
  return "other";
}

std::optional<Framework> parse_framework(std::string_view text) {
  for (const auto& [value, name] : kNames) {
    if (text == name) return value;
  }
  // Accepted aliases: the frameworks built on Megatron-Core.
  if (text == "nemo" || text == "megatron-bridge") return Framework::MegatronCore;
  return std::nullopt;
}

const char* framework_choices() {
  return "\"megatron-core\" (also \"nemo\", \"megatron-bridge\"), \"megatron-lm\", "
         "\"megatron-deepspeed\", \"deepspeed\", \"torchtitan\", \"llm-foundry\", \"maxtext\", "
         "\"other\", \"parplan\" (parplan's own executor)";
}

}  // namespace parplan
