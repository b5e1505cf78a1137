// Strict JSON input: reading files, parsing with duplicate-key and depth checks, and a reader
// that takes typed, ranged values out of an object and rejects keys nobody asked for (with
// the nearest valid key suggested). Every error is a parplan::InputError naming the file and
// the key path. Tested in tests/core/json_input_test.cpp and the bad-input corpus.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace parplan {

using Json = nlohmann::json;

// Deepest nesting accepted in any input file.
inline constexpr int kMaxJsonDepth = 64;

// Reads a whole file; errors for a missing path, a directory, an empty or an oversized file.
std::string read_text_file(const std::string& path);

// Parses JSON text; `source` names it in errors (a file path or "<inline>").
Json parse_json(std::string_view text, const std::string& source);

// read_text_file + parse_json.
Json load_json_file(const std::string& path);

// A short printable rendering of a JSON value for error messages.
std::string describe_json_value(const Json& value);

// Levenshtein distance; used to suggest the nearest valid key.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The allowed keys an unknown `key` may have meant: those it is another program's name for
// (core/key_aliases.h: `nodes` -> num_nodes, `vp` -> vpp), else those nearest in spelling
// (case aside; all of them on a tie of up to three). Keys in `present` (already in the
// object) are suggested only when no other key fits. Empty when nothing fits.
std::vector<std::string> suggest_keys(std::string_view key, const std::vector<std::string>& allowed,
                                      const std::vector<std::string>& present = {});
// ` (did you mean "a"?)`, ` (did you mean "a" or "b"?)` from suggest_keys, or "".
std::string nearest_key_hint(std::string_view key, const std::vector<std::string>& allowed,
                             const std::vector<std::string>& present = {});
// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
std::string quoted_alternatives(const std::vector<std::string>& names);

// Joins a key path: join_key_path("plan", "tp") == "plan.tp"; join_key_path("", "tp") == "tp".
std::string join_key_path(std::string_view parent, std::string_view key);

// Takes values out of one JSON object. Call finish() last: it rejects every key that was not
// asked for. The object must outlive the reader.
class JsonReader {
 public:
  JsonReader(const Json& object, std::string file, std::string path);

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string path_of(std::string_view key) const { return join_key_path(path_, key); }

  bool has(std::string_view key) const;
  // Marks a key as known without reading it (e.g. a documented comment key).
  void allow(std::string_view key);
  // The raw value, or nullptr when absent; marks the key as known.
  const Json* find(std::string_view key);

  int64_t require_int(std::string_view key, int64_t min,
                      int64_t max = std::numeric_limits<int64_t>::max());
  std::optional<int64_t> optional_int(std::string_view key, int64_t min,
                                      int64_t max = std::numeric_limits<int64_t>::max());
  int64_t int_or(std::string_view key, int64_t fallback, int64_t min,
                 int64_t max = std::numeric_limits<int64_t>::max());

  double require_number(std::string_view key, double min, double max);
  std::optional<double> optional_number(std::string_view key, double min, double max);
  double number_or(std::string_view key, double fallback, double min, double max);

  bool bool_or(std::string_view key, bool fallback);
  std::optional<bool> optional_bool(std::string_view key);

  std::string require_string(std::string_view key);
  std::string string_or(std::string_view key, std::string fallback);
  // A string that must be one of `choices`.
  std::string choice_or(std::string_view key, std::string fallback,
                        std::initializer_list<std::string_view> choices);
  std::string require_choice(std::string_view key, std::initializer_list<std::string_view> choices);

  // A nested object (required) as a reader.
  JsonReader object(std::string_view key);
  std::optional<JsonReader> optional_object(std::string_view key);

  // Throws for the first key that was neither read nor allowed.
  void finish() const;
  // The key paths that were neither read nor allowed, for readers that tolerate extras.
  std::vector<std::string> unknown_key_paths() const;

  // Errors about this object's keys.
  [[noreturn]] void fail(std::string_view key, const std::string& found,
                         const std::string& allowed) const;

 private:
  const Json& value_at(std::string_view key);

  const Json& object_;
  std::string file_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
};

// Interprets one JSON value as an integer in [min, max]; `file`/`path` name it in errors.
int64_t json_to_int(const Json& value, const std::string& file, const std::string& path,
                    int64_t min, int64_t max);
double json_to_number(const Json& value, const std::string& file, const std::string& path,
                      double min, double max);

}  // namespace parplan
