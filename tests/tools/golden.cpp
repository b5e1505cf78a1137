#include "tests/tools/golden.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <vector>

namespace parplan::testing {

namespace {

struct Token {
  bool is_number;
  std::string text;
  double value = 0;
  int decimals = 0;  // digits after the decimal point as printed
};

std::vector<Token> tokenize(const std::string& text) {
  static const std::regex number(R"(\d+(\.\d+)?([eE][-+]?\d+)?)");
  std::vector<Token> tokens;
  auto begin = std::sregex_iterator(text.begin(), text.end(), number);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto pos = static_cast<std::size_t>(it->position());
    if (pos > last) tokens.push_back({false, text.substr(last, pos - last)});
    Token t{true, it->str()};
    t.value = std::stod(t.text);
    const auto dot = t.text.find('.');
    const auto exp = t.text.find_first_of("eE");
    if (dot != std::string::npos && exp == std::string::npos) {
      t.decimals = static_cast<int>(t.text.size() - dot - 1);
    } else if (exp != std::string::npos) {
      t.decimals = -1;  // scientific: relative tolerance only
    }
    tokens.push_back(t);
    last = pos + it->length();
  }
  if (last < text.size()) tokens.push_back({false, text.substr(last)});
  return tokens;
}

bool numbers_close(const Token& a, const Token& b, double rel) {
  const double scale = std::max(std::fabs(a.value), std::fabs(b.value));
  double allowed = rel * scale + 1e-12;  // absolute floor for values that are zero up to noise
  const int decimals = std::min(a.decimals, b.decimals);
  if (decimals >= 0 && a.decimals == b.decimals) {
    allowed = std::max(allowed, std::pow(10.0, -decimals) * 1.000001);
  }
  return std::fabs(a.value - b.value) <= allowed;
}

std::string context(const std::string& text, std::size_t offset) {
  const std::size_t from = offset > 40 ? offset - 40 : 0;
  return text.substr(from, 100);
}

}  // namespace

std::string compare_text(const std::string& expected, const std::string& actual, double rel) {
  const auto e = tokenize(expected);
  const auto a = tokenize(actual);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < std::min(e.size(), a.size()); ++i) {
    const bool same = e[i].is_number == a[i].is_number &&
                      (e[i].is_number ? numbers_close(e[i], a[i], rel) : e[i].text == a[i].text);
    if (!same) {
      return "differs at character " + std::to_string(offset) + ": expected \"" + e[i].text +
             "\", found \"" + a[i].text + "\" near: " + context(actual, offset);
    }
    offset += a[i].text.size();
  }
  if (e.size() != a.size()) {
    return "differs in length (expected " + std::to_string(e.size()) + " tokens, found " +
           std::to_string(a.size()) + ") near: " + context(actual, offset);
  }
  return "";
}

std::string compare_json(const Json& e, const Json& a, double rel, const std::string& path) {
  const std::string where = path.empty() ? "(root)" : path;
  if (e.is_number() && a.is_number()) {
    const double x = e.get<double>(), y = a.get<double>();
    const double scale = std::max(std::fabs(x), std::fabs(y));
    if (std::fabs(x - y) > rel * scale + 1e-12) {
      return where + ": expected " + e.dump() + ", found " + a.dump();
    }
    return "";
  }
  if (e.type() != a.type()) return where + ": expected " + e.dump() + ", found " + a.dump();
  if (e.is_string()) {
    const std::string diff = compare_text(e.get<std::string>(), a.get<std::string>(), rel);
    return diff.empty() ? "" : where + ": " + diff;
  }
  if (e.is_array()) {
    if (e.size() != a.size()) {
      return where + ": expected " + std::to_string(e.size()) + " entries, found " +
             std::to_string(a.size());
    }
    for (std::size_t i = 0; i < e.size(); ++i) {
      const std::string diff = compare_json(e[i], a[i], rel, path + "[" + std::to_string(i) + "]");
      if (!diff.empty()) return diff;
    }
    return "";
  }
  if (e.is_object()) {
    for (const auto& [key, value] : e.items()) {
      if (!a.contains(key)) return where + ": key \"" + key + "\" is missing";
      const std::string diff = compare_json(value, a.at(key), rel, path + "." + key);
      if (!diff.empty()) return diff;
    }
    for (const auto& [key, value] : a.items()) {
      if (!e.contains(key)) return where + ": unexpected key \"" + key + "\"";
    }
    return "";
  }
  return e == a ? "" : where + ": expected " + e.dump() + ", found " + a.dump();
}

bool update_goldens_requested() {
  const char* value = std::getenv("PARPLAN_UPDATE_GOLDENS");
  return value != nullptr && std::string(value) == "1";
}

}  // namespace parplan::testing
