// A plain-text table with aligned columns for terminal output.
#pragma once

#include <string>
#include <vector>

namespace parplan::tools {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Columns whose index is in right_aligned are padded on the left (numbers).
  std::string render(const std::vector<std::size_t>& right_aligned = {}) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point formatting helpers.
std::string fixed(double value, int decimals);
std::string percent(double fraction, int decimals = 1);
std::string with_unit(double value, const char* unit, int decimals);

}  // namespace parplan::tools
