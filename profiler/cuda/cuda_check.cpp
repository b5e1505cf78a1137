#include "profiler/cuda/cuda_check.h"

namespace parplan::profiler::cuda {

void throw_call_error(const char* library, const std::string& what, const char* call,
                      const char* file, int line) {
  throw Error(std::string(library) + " call failed: " + call + " at " + file + ":" +
              std::to_string(line) + ": " + what);
}

}  // namespace parplan::profiler::cuda
