#include "tools/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parplan::tools {

std::string TextTable::render(const std::vector<std::size_t>& right_aligned) const {
  std::vector<std::size_t> widths(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const std::string pad(widths[i] - cell.size(), ' ');
      const bool right =
          std::find(right_aligned.begin(), right_aligned.end(), i) != right_aligned.end();
      out += right ? pad + cell : cell + pad;
      if (i + 1 < widths.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  std::size_t total = 0;
  for (auto w : widths) total += w + 2;
  out += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string percent(double fraction, int decimals) {
  return fixed(100.0 * fraction, decimals) + "%";
}

std::string with_unit(double value, const char* unit, int decimals) {
  return fixed(value, decimals) + " " + unit;
}

}  // namespace parplan::tools
