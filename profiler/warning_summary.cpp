#include "profiler/warning_summary.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/plural.h"

namespace parplan::profiler {

namespace {

constexpr std::string_view kBudgetEnded = "budget ended first";

// "GEMM fp32" of "GEMM fp32 512x512x512: median ...": the words before the first that starts
// with a digit (a shape, a size, a group; "fp32" is part of the kind).
std::string kind_of(const std::string& warning) {
  std::istringstream words(warning);
  std::string word, kind;
  while (words >> word) {
    if (std::isdigit(static_cast<unsigned char>(word.front())) != 0) break;
    kind += (kind.empty() ? "" : " ") + word;
  }
  if (!kind.empty() && kind.back() == ':') kind.pop_back();
  // "all_reduce group 2 8 B": the group size follows; the kind is the collective.
  if (kind.ends_with(" group")) kind.resize(kind.size() - 6);
  return kind.empty() ? warning : kind;
}

struct Group {
  std::string kind;
  bool budget_ended = false;
  std::string first;
  int64_t count = 0;
};

}  // namespace

std::vector<std::string> summarize_warnings(const std::vector<std::string>& warnings) {
  std::vector<Group> groups;
  for (const auto& warning : warnings) {
    const std::string kind = kind_of(warning);
    const bool budget = warning.find(kBudgetEnded) != std::string::npos;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.kind == kind && g.budget_ended == budget;
    });
    if (it == groups.end()) {
      groups.push_back({kind, budget, warning, 0});
      it = groups.end() - 1;
    }
    ++it->count;
  }
  std::vector<std::string> out;
  for (const auto& g : groups) {
    if (g.count == 1) {
      out.push_back(g.first);
    } else if (g.budget_ended) {
      out.push_back(count_of(g.count, g.kind + " measurement") +
                    " ended their time budget before reaching the noise threshold (e.g. " +
                    g.first + ")");
    } else {
      out.push_back(std::to_string(g.count) + " x " + g.kind + " (e.g. " + g.first + ")");
    }
  }
  return out;
}

}  // namespace parplan::profiler
