#include "core/backend_check.h"

namespace parplan {

std::string backend_error_message(const char* library, const std::string& message, const char* call,
                                  const char* file, int line) {
  return std::string(library) + " call failed: " + call + " at " + file + ":" +
         std::to_string(line) + ": " + message;
}

void throw_backend_error(const char* library, const std::string& message, const char* call,
                         const char* file, int line) {
  throw Error(backend_error_message(library, message, call, file, line));
}

}  // namespace parplan
