// Readers for the launch files `parplan import` takes: a Megatron-LM argument list or shell
// script, a Megatron-Bridge YAML override, a torchtitan TOML job config. Each turns the text
// into (key, value, line) settings; no YAML or TOML library: the subset parplan export writes
// plus common hand-written forms (comments, quoting, line continuations, bash arrays, nested
// YAML mappings, flow lists, TOML tables and multi-line arrays). Text they cannot read is an
// error naming FILE:LINE. Tested in tests/tools/import_test.cpp and tests/bad_inputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parplan::tools {

struct LaunchSetting {
  std::string key;    // "--tensor-model-parallel-size", "model.num_layers", "parallelism.tp"
  std::string value;  // unquoted; "" for a switch
  int line = 0;       // 1-based line in the file
};

// Megatron-LM: every "--flag [value]" of the text (values never start with "--"), with
// torchrun's own flags keyed "torchrun --nnodes" etc.; "export NAME=VALUE" lines as
// "env NAME". Comments, "\" continuations, quotes and bash arrays NAME=( ... ) are read.
std::vector<LaunchSetting> read_megatron_arguments(std::string_view text, const std::string& file);

// YAML block mappings of any depth as dotted keys ("model.num_layers"); flow values ([...],
// {...}) and scalars kept as text, quotes removed. Anchors, multi-document files, block
// sequences and block scalars are errors.
std::vector<LaunchSetting> read_yaml_settings(std::string_view text, const std::string& file);

// TOML tables and key/value pairs as "table.key"; strings unquoted, arrays kept as text
// (multi-line arrays joined). Inline tables, array tables and multi-line strings are errors.
std::vector<LaunchSetting> read_toml_settings(std::string_view text, const std::string& file);

// The elements of a flow list "[a, "b", [c, d]]" at its top level, quotes removed from
// scalars, nested lists kept as text; nullopt when `text` is not a list.
std::optional<std::vector<std::string>> split_flow_list(std::string_view text);

}  // namespace parplan::tools
