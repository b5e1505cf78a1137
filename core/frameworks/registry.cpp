#include "core/frameworks/registry.h"

#include <iterator>

namespace parplan {

namespace frameworks {
// Defined in core/frameworks/<name>.cpp.
extern const FrameworkDescription kMegatronCore;
extern const FrameworkDescription kMegatronLm;
extern const FrameworkDescription kMegatronDeepspeed;
extern const FrameworkDescription kDeepspeed;
extern const FrameworkDescription kTorchtitan;
extern const FrameworkDescription kLlmFoundry;
extern const FrameworkDescription kMaxtext;
extern const FrameworkDescription kOther;
extern const FrameworkDescription kParplan;
}  // namespace frameworks

namespace {

// Indexed by the enum value (tests/core/frameworks_test.cpp checks each entry's `framework`).
constexpr const FrameworkDescription* kRegistry[] = {
    &frameworks::kMegatronCore,       // megatron_core.cpp
    &frameworks::kMegatronLm,         // megatron_lm.cpp
    &frameworks::kMegatronDeepspeed,  // megatron_deepspeed.cpp
    &frameworks::kDeepspeed,          // deepspeed.cpp
    &frameworks::kTorchtitan,         // torchtitan.cpp
    &frameworks::kLlmFoundry,         // llm_foundry.cpp
    &frameworks::kMaxtext,            // maxtext.cpp
    &frameworks::kOther,              // other.cpp
    &frameworks::kParplan,            // parplan.cpp
};
static_assert(std::size(kRegistry) == kFrameworkCount,
              "every Framework value needs its description in kRegistry");

}  // namespace

const FrameworkDescription& framework_info(Framework framework) {
  return *kRegistry[static_cast<std::size_t>(framework)];
}

std::span<const FrameworkDescription* const> all_frameworks() { return kRegistry; }

}  // namespace parplan
