// Errors and checks shared by every library.
//
// parplan::Error is anything a user can cause and fix (bad input, an impossible job); it
// carries one message and maps to exit code 1 (parplan::UsageError: 2). parplan::InputError is the
// common case of a wrong value in a file: it names the file, the key path, what was found and what
// is allowed. PARPLAN_ASSERT guards internal invariants in every build type and aborts with
// file:line. Tested in tests/core/model_spec_test.cpp, hf_config_test.cpp and the bad-input corpus
// (tests/bad_inputs).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace parplan {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A command line that asks for something contradictory (an option given twice with different
// values): exit code 2, like the usage errors the option parser finds.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

// "FILE: KEY.PATH: found FOUND; allowed: ALLOWED". Any of the parts may be empty.
class InputError : public Error {
 public:
  InputError(std::string file, std::string key_path, std::string found, std::string allowed);

  const std::string& file() const { return file_; }
  const std::string& key_path() const { return key_path_; }

 private:
  std::string file_;
  std::string key_path_;
};

namespace detail {
[[noreturn]] void assert_fail(const char* condition, const char* file, int line);

template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

}  // namespace parplan

// Throws parplan::Error with the streamed message when cond is false.
#define PARPLAN_CHECK(cond, ...)                                                 \
  do {                                                                           \
    if (!(cond)) throw ::parplan::Error(::parplan::detail::concat(__VA_ARGS__)); \
  } while (0)

// Internal invariant: aborts with file:line in every build type.
#define PARPLAN_ASSERT(cond)                                                \
  do {                                                                      \
    if (!(cond)) ::parplan::detail::assert_fail(#cond, __FILE__, __LINE__); \
  } while (0)
