#include "core/check.h"

namespace parplan {

namespace {
std::string format_input_error(const std::string& file, const std::string& key_path,
                               const std::string& found, const std::string& allowed) {
  std::string message;
  if (!file.empty()) message += file + ": ";
  if (key_path.empty()) {
    // A problem with the file as a whole: "job.json: no such file; expected a readable file".
    message += found.empty() ? std::string("invalid input") : found;
    if (!allowed.empty()) message += "; expected " + allowed;
    return message;
  }
  message += key_path + ": ";
  message += found.empty() ? std::string("invalid value") : "found " + found;
  if (!allowed.empty()) message += "; allowed: " + allowed;
  return message;
}
}  // namespace

InputError::InputError(std::string file, std::string key_path, std::string found,
                       std::string allowed)
    : Error(format_input_error(file, key_path, found, allowed)),
      file_(std::move(file)),
      key_path_(std::move(key_path)) {}

namespace detail {
void assert_fail(const char* condition, const char* file, int line) {
  std::fprintf(stderr, "parplan internal error: %s:%d: assertion '%s' failed\n", file, line,
               condition);
  std::abort();
}
}  // namespace detail

}  // namespace parplan
