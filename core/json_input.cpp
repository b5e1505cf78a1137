#include "core/json_input.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/check.h"
#include "core/key_aliases.h"

namespace parplan {

namespace {

constexpr std::uintmax_t kMaxInputFileBytes = 64ull << 20;

// Keeps messages printable whatever bytes a broken file holds.
std::string printable(std::string_view text, std::size_t max_chars = 80) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    }
  }
  return out;
}

struct DuplicateKey {
  std::string path;
};
struct TooDeep {
  std::string path;
};

std::string join_range(std::initializer_list<std::string_view> choices) {
  std::string out;
  for (auto choice : choices) {
    if (!out.empty()) out += ", ";
    out += '"';
    out += choice;
    out += '"';
  }
  return out;
}

std::string int_range_text(int64_t min, int64_t max) {
  if (max == std::numeric_limits<int64_t>::max()) return "an integer >= " + std::to_string(min);
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// "line 3, column 5" of the 0-based byte `offset` of `text`.
std::string line_and_column(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

// The parser's error with its place: a comment is named as such (JSON has none), anything
// else keeps the parser's reason without its exception prefix.
[[noreturn]] void throw_parse_error(std::string_view text, const std::string& source,
                                    const Json::parse_error& err) {
  // err.byte counts the characters read, the offending one included.
  const std::size_t at = err.byte > 0 ? err.byte - 1 : 0;
  for (std::size_t i = at > 0 ? at - 1 : 0; i <= at && i + 1 < text.size(); ++i) {
    if (text[i] == '/' && (text[i + 1] == '/' || text[i + 1] == '*')) {
      const std::size_t end = text.find('\n', i);
      const std::string_view comment =
          text.substr(i, (end == std::string_view::npos ? text.size() : end) - i);
      throw InputError(source, line_and_column(text, i),
                       "a comment (" + printable(comment, 40) + ")",
                       "no comments: JSON does not allow comments (a job file keeps notes in "
                       "its \"comment\" key)");
    }
  }
  std::string reason = err.what();
  if (const auto colon = reason.find(": "); reason.starts_with("[json.exception")) {
    if (colon != std::string::npos) reason = reason.substr(colon + 2);
  }
  throw InputError(source, line_and_column(text, at),
                   "text that is not valid JSON (" + printable(reason, 240) + ")",
                   "one JSON object (UTF-8)");
}

}  // namespace

std::string read_text_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    // ENAMETOOLONG, ELOOP, EACCES on a folder, ...
    throw InputError(path, "", "a path that cannot be looked up (" + ec.message() + ")",
                     "a readable file");
  }
  if (ec || !fs::exists(status)) throw InputError(path, "", "no such file", "a readable file");
  if (fs::is_directory(status)) throw InputError(path, "", "a directory", "a file");
  const std::string limit_text =
      "input files up to " + std::to_string(kMaxInputFileBytes >> 20) + " MiB";
  const auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes) {
    throw InputError(path, "", "a file of " + std::to_string(size) + " bytes", limit_text);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "a file that cannot be opened", "a readable file");
  // Read at most one byte past the limit: pipes (`--job <(...)`) have no size, devices such as
  // /dev/zero never end, and a regular file may grow between stat and read.
  std::string text;
  // One allocation: a regular file's size, else room up to the limit (reserved, not touched),
  // so reading a device or pipe never copies what it has read.
  const bool sized = !ec && fs::is_regular_file(status);
  text.reserve(sized ? static_cast<std::size_t>(size) + 1 : kMaxInputFileBytes + 1);
  char buffer[1 << 16];
  while (text.size() <= kMaxInputFileBytes && in.read(buffer, sizeof buffer).gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(path, "", "a file that cannot be read", "a readable file");
  if (text.size() > kMaxInputFileBytes) {
    throw InputError(path, "", "a file larger than the limit", limit_text);
  }
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError(path, "", "an empty file", "a JSON object");
  }
  return text;
}

Json parse_json(std::string_view text, const std::string& source) {
  // Per open object: the keys seen so far, and the key path leading to it.
  std::vector<std::set<std::string>> seen_keys;
  std::vector<std::string> paths{""};
  std::string last_key;
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) -> bool {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        if (depth >= kMaxJsonDepth) throw TooDeep{paths.back()};
        const bool in_object = !seen_keys.empty() && !last_key.empty();
        paths.push_back(in_object ? join_key_path(paths.back(), last_key) : paths.back());
        last_key.clear();
        seen_keys.emplace_back();
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!seen_keys.empty()) seen_keys.pop_back();
        if (paths.size() > 1) paths.pop_back();
        last_key.clear();
        break;
      case Json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        if (!seen_keys.empty() && !seen_keys.back().insert(key).second) {
          throw DuplicateKey{join_key_path(paths.back(), key)};
        }
        last_key = key;
        break;
      }
      case Json::parse_event_t::value:
        last_key.clear();
        break;
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                       /*ignore_comments=*/false);
  } catch (const DuplicateKey& dup) {
    throw InputError(source, dup.path, "a duplicated key", "each key once per object");
  } catch (const TooDeep& deep) {
    throw InputError(source, deep.path, "nesting deeper than " + std::to_string(kMaxJsonDepth),
                     "at most " + std::to_string(kMaxJsonDepth) + " levels");
  } catch (const Json::out_of_range& err) {
    // A number literal beyond the double range (1e400): the lexer stops at the value that
    // follows the last key read.
    const std::string path =
        last_key.empty() ? paths.back() : join_key_path(paths.back(), last_key);
    throw InputError(source, path.empty() ? "(top level)" : path,
                     "a number beyond the double range (" + printable(err.what(), 160) + ")",
                     "finite numbers (magnitude below 1.8e308)");
  } catch (const Json::parse_error& err) {
    throw_parse_error(text, source, err);
  }
}

Json load_json_file(const std::string& path) { return parse_json(read_text_file(path), path); }

std::string describe_json_value(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "\"" + printable(value.get_ref<const std::string&>(), 60) + "\"";
    case Json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    default:
      return printable(value.dump(), 60);
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::vector<std::string> nearest_by_spelling(std::string_view key,
                                             const std::vector<std::string>& allowed,
                                             const std::vector<std::string>& excluded) {
  std::vector<std::string> out;
  const std::string lowered = lower_case(key);
  const std::size_t budget = std::max<std::size_t>(2, key.size() / 3);
  std::size_t best = budget + 1;
  for (const auto& candidate : allowed) {
    if (contains(excluded, candidate)) continue;
    const std::size_t distance = edit_distance(lowered, lower_case(candidate));
    if (distance < best) out.clear();
    if (distance <= std::min(best, budget)) {
      best = distance;
      out.push_back(candidate);
    }
  }
  // More than three equally near keys is no suggestion, only noise ("r": tp, pp, dp, cp, ep).
  if (out.size() > 3) out.clear();
  return out;
}

}  // namespace

std::vector<std::string> suggest_keys(std::string_view key, const std::vector<std::string>& allowed,
                                      const std::vector<std::string>& present) {
  std::vector<std::string> out;
  // By meaning first: another program's name for an allowed key.
  for (const auto& target : key_alias_targets(key)) {
    if (contains(allowed, target) && !contains(present, target) && !contains(out, target)) {
      out.push_back(target);
    }
  }
  if (!out.empty()) return out;
  // Then by spelling (case aside): every allowed key at the smallest distance within budget,
  // those the object lacks first ("modle" beside "model" still points at "model").
  out = nearest_by_spelling(key, allowed, present);
  if (out.empty() && !present.empty()) out = nearest_by_spelling(key, allowed, {});
  return out;
}

std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "\"" + names[i] + "\"";
  }
  return out;
}

std::string nearest_key_hint(std::string_view key, const std::vector<std::string>& allowed,
                             const std::vector<std::string>& present) {
  const auto names = suggest_keys(key, allowed, present);
  if (names.empty()) return "";
  return " (did you mean " + quoted_alternatives(names) + "?)";
}

std::string join_key_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

int64_t json_to_int(const Json& value, const std::string& file, const std::string& path,
                    int64_t min, int64_t max) {
  const std::string allowed = int_range_text(min, max);
  if (value.is_number_unsigned()) {
    // nlohmann stores every non-negative integer literal as unsigned: check both ends.
    const auto u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(max) || static_cast<int64_t>(u) < min) {
      throw InputError(file, path, std::to_string(u), allowed);
    }
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) {
    const auto i = value.get<int64_t>();
    if (i < min || i > max) throw InputError(file, path, std::to_string(i), allowed);
    return i;
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    const bool integral = std::isfinite(d) && std::floor(d) == d;
    const std::string found = integral ? printable(value.dump()) +
                                             " (a number beyond the 64-bit integer range or "
                                             "written with a fraction or exponent)"
                                       : printable(value.dump());
    throw InputError(file, path, found, allowed);
  }
  throw InputError(file, path, describe_json_value(value), allowed);
}

double json_to_number(const Json& value, const std::string& file, const std::string& path,
                      double min, double max) {
  const std::string allowed = "a number in [" + number_text(min) + ", " + number_text(max) + "]";
  if (!value.is_number()) throw InputError(file, path, describe_json_value(value), allowed);
  const double d = value.get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    throw InputError(file, path, printable(value.dump()), allowed);
  }
  return d;
}

JsonReader::JsonReader(const Json& object, std::string file, std::string path)
    : object_(object), file_(std::move(file)), path_(std::move(path)) {
  if (!object_.is_object()) {
    throw InputError(file_, path_.empty() ? "(top level)" : path_, describe_json_value(object_),
                     "a JSON object");
  }
}

bool JsonReader::has(std::string_view key) const { return object_.contains(key); }

void JsonReader::allow(std::string_view key) { known_.emplace(key); }

const Json* JsonReader::find(std::string_view key) {
  known_.emplace(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

const Json& JsonReader::value_at(std::string_view key) {
  const Json* value = find(key);
  if (value == nullptr) {
    // A misspelt required key is reported as missing; name the given key it resembles.
    std::vector<std::string> unread;
    for (const auto& [name, unused] : object_.items()) {
      if (known_.count(name) == 0) unread.push_back(name);
    }
    std::string missing = "nothing (the key is missing)";
    for (const auto& name : unread) {
      const bool alias = !key_alias_targets(name).empty() &&
                         !suggest_keys(name, {std::string(key)}).empty() &&
                         edit_distance(name, key) > 2;
      if (alias) {
        missing = "nothing (the key is missing; \"" + printable(name, 60) +
                  "\" is given: rename it \"" + std::string(key) + "\")";
        break;
      }
      if (!suggest_keys(name, {std::string(key)}).empty()) {
        missing = "nothing (the key is missing; is \"" + printable(name, 60) + "\" a misspelling?)";
        break;
      }
    }
    fail(key, missing, "a value; this key is required");
  }
  return *value;
}

int64_t JsonReader::require_int(std::string_view key, int64_t min, int64_t max) {
  return json_to_int(value_at(key), file_, path_of(key), min, max);
}

std::optional<int64_t> JsonReader::optional_int(std::string_view key, int64_t min, int64_t max) {
  const Json* value = find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  return json_to_int(*value, file_, path_of(key), min, max);
}

int64_t JsonReader::int_or(std::string_view key, int64_t fallback, int64_t min, int64_t max) {
  return optional_int(key, min, max).value_or(fallback);
}

double JsonReader::require_number(std::string_view key, double min, double max) {
  return json_to_number(value_at(key), file_, path_of(key), min, max);
}

std::optional<double> JsonReader::optional_number(std::string_view key, double min, double max) {
  const Json* value = find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  return json_to_number(*value, file_, path_of(key), min, max);
}

double JsonReader::number_or(std::string_view key, double fallback, double min, double max) {
  return optional_number(key, min, max).value_or(fallback);
}

std::optional<bool> JsonReader::optional_bool(std::string_view key) {
  const Json* value = find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_boolean()) fail(key, describe_json_value(*value), "true or false");
  return value->get<bool>();
}

bool JsonReader::bool_or(std::string_view key, bool fallback) {
  return optional_bool(key).value_or(fallback);
}

std::string JsonReader::require_string(std::string_view key) {
  const Json& value = value_at(key);
  if (!value.is_string()) fail(key, describe_json_value(value), "a string");
  return value.get<std::string>();
}

std::string JsonReader::string_or(std::string_view key, std::string fallback) {
  const Json* value = find(key);
  if (value == nullptr || value->is_null()) return fallback;
  if (!value->is_string()) fail(key, describe_json_value(*value), "a string");
  return value->get<std::string>();
}

std::string JsonReader::choice_or(std::string_view key, std::string fallback,
                                  std::initializer_list<std::string_view> choices) {
  const Json* value = find(key);
  if (value == nullptr || value->is_null()) return fallback;
  if (value->is_string()) {
    const auto& text = value->get_ref<const std::string&>();
    for (auto choice : choices) {
      if (text == choice) return text;
    }
  }
  fail(key, describe_json_value(*value), "one of " + join_range(choices));
}

std::string JsonReader::require_choice(std::string_view key,
                                       std::initializer_list<std::string_view> choices) {
  value_at(key);
  return choice_or(key, "", choices);
}

JsonReader JsonReader::object(std::string_view key) {
  const Json& value = value_at(key);
  if (!value.is_object()) fail(key, describe_json_value(value), "a JSON object");
  return JsonReader(value, file_, path_of(key));
}

std::optional<JsonReader> JsonReader::optional_object(std::string_view key) {
  const Json* value = find(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  if (!value->is_object()) fail(key, describe_json_value(*value), "a JSON object");
  return JsonReader(*value, file_, path_of(key));
}

void JsonReader::finish() const {
  std::vector<std::string> allowed(known_.begin(), known_.end());
  // Keys the object already has are no suggestion (`nodes` beside `node` means num_nodes).
  std::vector<std::string> present;
  for (const auto& [key, value] : object_.items()) present.push_back(key);
  for (const auto& [key, value] : object_.items()) {
    if (known_.count(key) != 0) continue;
    std::string list;
    for (const auto& name : allowed) list += (list.empty() ? "" : ", ") + name;
    throw InputError(file_, path_of(printable(key, 60)), "an unknown key",
                     list + nearest_key_hint(key, allowed, present));
  }
}

std::vector<std::string> JsonReader::unknown_key_paths() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : object_.items()) {
    if (known_.count(key) == 0) out.push_back(path_of(printable(key, 60)));
  }
  return out;
}

void JsonReader::fail(std::string_view key, const std::string& found,
                      const std::string& allowed) const {
  throw InputError(file_, path_of(key), found, allowed);
}

}  // namespace parplan
