#include "core/node_suggestions.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include "core/json_input.h"
#include "core/presets.h"

namespace parplan {

namespace {

struct PresetGpu {
  std::string preset;              // "dgx-a100-80gb"
  std::string gpu;                 // "A100-SXM4-80GB"
  std::string model;               // "a100": the GPU name's first word, lower case
  std::vector<std::string> words;  // the preset's and the GPU's words, lower case
};

// Lower-case words of letters and digits: "DGX-H100 80GB" -> dgx, h100, 80gb.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

std::vector<PresetGpu> preset_gpus() {
  std::vector<PresetGpu> out;
  for (const auto& name : node_preset_names()) {
    const auto node = find_node_preset(name);
    if (!node) continue;
    PresetGpu p{name, node->gpu.name, "", words_of(name)};
    const auto gpu_words = words_of(node->gpu.name);
    if (!gpu_words.empty()) p.model = gpu_words.front();
    p.words.insert(p.words.end(), gpu_words.begin(), gpu_words.end());
    out.push_back(std::move(p));
  }
  return out;
}

// A word shaped like a GPU model: one or two letters and two or three digits, maybe a letter
// (h20, a10g, mi250, b100); "nvl72" or "xe9680" are not.
bool looks_like_gpu(const std::string& word) {
  static const std::regex pattern("^[a-z]{1,2}[0-9]{2,3}[a-z]?$");
  return std::regex_match(word, pattern);
}

// The presets carrying one of the GPUs `words` names, those sharing the most words first
// kept (memory "80gb", maker "dgx").
std::vector<std::string> by_gpu(const std::vector<PresetGpu>& presets,
                                const std::vector<std::string>& words) {
  std::vector<std::pair<int, std::string>> scored;
  int best = 0;
  for (const auto& p : presets) {
    if (!has(words, p.model)) continue;
    int shared = 0;
    for (const auto& w : words) shared += has(p.words, w) ? 1 : 0;
    best = std::max(best, shared);
    scored.emplace_back(shared, p.preset);
  }
  std::vector<std::string> out;
  for (const auto& [shared, name] : scored) {
    if (shared == best) out.push_back(name);
  }
  return out;
}

}  // namespace

NodePresetSuggestion suggest_node_presets(std::string_view text) {
  const auto presets = preset_gpus();
  const auto words = words_of(text);
  NodePresetSuggestion out;
  std::string lowered(text);
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& p : presets) {
    if (p.preset == lowered) return {{p.preset}, ""};
  }
  out.presets = by_gpu(presets, words);
  if (!out.presets.empty()) return out;
  for (const auto& w : words) {
    const bool carried = std::any_of(presets.begin(), presets.end(),
                                     [&](const PresetGpu& p) { return has(p.words, w); });
    if (looks_like_gpu(w) && !carried) return {{}, w};
  }
  // Spelling: no GPU named, so no GPU to swap.
  std::vector<std::string> names;
  for (const auto& p : presets) names.push_back(p.preset);
  out.presets = suggest_keys(text, names);
  return out;
}

std::string node_preset_hint(std::string_view text) {
  const NodePresetSuggestion s = suggest_node_presets(text);
  const auto presets = preset_gpus();
  if (!s.unknown_gpu.empty()) {
    std::string gpus;
    for (const auto& p : presets) {
      if (gpus.find(p.gpu) == std::string::npos) gpus += (gpus.empty() ? "" : ", ") + p.gpu;
    }
    return " (no preset carries a \"" + s.unknown_gpu + "\" GPU; the presets carry " + gpus +
           "; describe another server in a node file, hardware_profiles/README.md)";
  }
  if (s.presets.empty()) return "";
  std::vector<std::string> described;
  for (const auto& name : s.presets) {
    for (const auto& p : presets) {
      if (p.preset == name) described.push_back(name + "\" (" + p.gpu + ")");
    }
  }
  std::string out = " (did you mean ";
  for (std::size_t i = 0; i < described.size(); ++i) {
    if (i > 0) out += i + 1 == described.size() ? " or " : ", ";
    out += "\"" + described[i];
  }
  return out + "?)";
}

}  // namespace parplan
