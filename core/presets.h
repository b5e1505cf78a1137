// Built-in presets: model files (tools/models/*.json) and node files
// (hardware_profiles/nodes/*.json), embedded into the binary at build time so `parplan`
// works from any folder. The file stem is the preset name.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_spec.h"
#include "core/model_spec.h"

namespace parplan {

struct EmbeddedFile {
  std::string_view name;  // file stem, e.g. "llama3.1-70b"
  std::string_view path;  // repository-relative path, for messages
  std::string_view text;
};

// Defined in the generated embedded_presets.cpp.
std::span<const EmbeddedFile> embedded_model_files();
std::span<const EmbeddedFile> embedded_node_files();

std::vector<std::string> model_preset_names();
std::vector<std::string> node_preset_names();

// nullopt when no preset has this name; throws InputError when a preset fails to parse.
std::optional<ModelSpec> find_model_preset(std::string_view name);
std::optional<NodeSpec> find_node_preset(std::string_view name);

// "a, b, c" list for error messages.
std::string join_names(const std::vector<std::string>& names);

}  // namespace parplan
