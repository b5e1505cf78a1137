// FrameworkDescription: everything parplan knows about one training framework, in one value:
// its names, what it is and where the values come from, the plan keys it fills, the plans the
// planner may propose for it, the cost traits it implies, and the export formats that launch
// it. One file per framework defines one (core/frameworks/<name>.cpp); the registry lists them
// (core/frameworks/registry.h). Tested in tests/core/frameworks_test.cpp.
#pragma once

#include <span>
#include <string_view>

#include "core/framework.h"
#include "core/frameworks/cost_traits.h"
#include "core/frameworks/plan_defaults.h"
#include "core/frameworks/planner_support.h"
#include "core/training_spec.h"

namespace parplan {

struct FrameworkDescription {
  Framework framework = Framework::Other;
  // The job's `framework` value, and other spellings a job may use for the same software.
  const char* name = "";
  std::span<const std::string_view> aliases{};
  // A few words shown after the name in the list of accepted values ("" for none).
  const char* choice_note = "";
  // One line: what the software is; and the papers, files and recipes the values cite.
  const char* summary = "";
  const char* sources = "";
  PlanDefaults plan_defaults{};
  PlannerSupport planner_support{};
  // The cost traits the software implies for a training setup.
  FrameworkTraits (*cost_traits)(const TrainingSpec& training) = nullptr;
  // `parplan export --format` values whose output launches this framework itself.
  std::span<const std::string_view> export_formats{};
};

}  // namespace parplan
