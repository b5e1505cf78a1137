// What an unknown `cluster.node` name may have meant, by GPU as well as by spelling:
// "h100", "H100" or "dgx-h100-80gb" name the presets that carry an H100 (narrowed by the
// memory and the other words given), never a preset of another GPU ("dgx-h100-80gb" is not
// answered with dgx-a100-80gb); a GPU no preset carries ("h20", "gh200") gets no spelling
// guess but the list of GPUs the presets carry. Used by resolve_node (core/job.cpp). Tested in
// tests/core/presets_test.cpp and the bad-input corpus (cluster-node-*).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace parplan {

struct NodePresetSuggestion {
  std::vector<std::string> presets;  // the preset names that fit, best first; may be empty
  std::string unknown_gpu;           // a GPU-like word no preset carries ("h20"), else empty
};

NodePresetSuggestion suggest_node_presets(std::string_view text);

// The suggestion as an error-message tail: ` (did you mean "dgx-h100" (H100-SXM5-80GB)?)`,
// ` (no preset carries a "h20" GPU; the presets carry ...)`, or "".
std::string node_preset_hint(std::string_view text);

}  // namespace parplan
