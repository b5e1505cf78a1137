#include "core/presets.h"

#include "core/json_input.h"

namespace parplan {

namespace {
std::vector<std::string> names_of(std::span<const EmbeddedFile> files) {
  std::vector<std::string> names;
  for (const auto& file : files) names.emplace_back(file.name);
  return names;
}

const EmbeddedFile* find_file(std::span<const EmbeddedFile> files, std::string_view name) {
  for (const auto& file : files) {
    if (file.name == name) return &file;
  }
  return nullptr;
}
}  // namespace

std::vector<std::string> model_preset_names() { return names_of(embedded_model_files()); }
std::vector<std::string> node_preset_names() { return names_of(embedded_node_files()); }

std::optional<ModelSpec> find_model_preset(std::string_view name) {
  const EmbeddedFile* file = find_file(embedded_model_files(), name);
  if (file == nullptr) return std::nullopt;
  const std::string path(file->path);
  return parse_model_spec(parse_json(file->text, path), path, "");
}

std::optional<NodeSpec> find_node_preset(std::string_view name) {
  const EmbeddedFile* file = find_file(embedded_node_files(), name);
  if (file == nullptr) return std::nullopt;
  const std::string path(file->path);
  return parse_node_spec(parse_json(file->text, path), path, "");
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace parplan
