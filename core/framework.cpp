#include "core/framework.h"

#include <algorithm>
#include <string>

#include "core/frameworks/registry.h"

namespace parplan {

const char* to_string(Framework framework) { return framework_info(framework).name; }

std::optional<Framework> parse_framework(std::string_view text) {
  for (const FrameworkDescription* description : all_frameworks()) {
    const auto& aliases = description->aliases;
    if (text == description->name ||
        std::find(aliases.begin(), aliases.end(), text) != aliases.end()) {
      return description->framework;
    }
  }
  return std::nullopt;
}

namespace {

// "\"megatron-core\" (also \"nemo\", \"megatron-bridge\"), ..., \"parplan\" (parplan's own
// executor)": each name, with its aliases and its choice note in parentheses.
std::string list_choices() {
  std::string out;
  for (const FrameworkDescription* description : all_frameworks()) {
    if (!out.empty()) out += ", ";
    out += "\"" + std::string(description->name) + "\"";
    std::string note;
    for (std::string_view alias : description->aliases) {
      note += (note.empty() ? "also \"" : ", \"") + std::string(alias) + "\"";
    }
    if (*description->choice_note != '\0') {
      note += (note.empty() ? "" : "; ") + std::string(description->choice_note);
    }
    if (!note.empty()) out += " (" + note + ")";
  }
  return out;
}

}  // namespace

const char* framework_choices() {
  static const std::string choices = list_choices();
  return choices.c_str();
}

}  // namespace parplan
