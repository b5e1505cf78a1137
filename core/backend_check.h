// One error for every failed backend call (CUDA, cuBLAS, NCCL, CUPTI, MPI): a parplan::Error
// naming the library, the call, file:line and the library's own message. The per-library
// check macros, shared by the profiler and the executor, sit in core/cuda/cuda_check.h,
// core/cuda/nccl_check.h, core/cuda/cupti_check.h and core/mpi/mpi_check.h.
// Tested in tests/core/backend_check_test.cpp.
#pragma once

#include <string>

#include "core/check.h"

namespace parplan {

// "LIBRARY call failed: CALL at FILE:LINE: MESSAGE"
std::string backend_error_message(const char* library, const std::string& message, const char* call,
                                  const char* file, int line);

[[noreturn]] void throw_backend_error(const char* library, const std::string& message,
                                      const char* call, const char* file, int line);

}  // namespace parplan
