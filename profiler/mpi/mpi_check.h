// PARPLAN_MPI_CHECK(call): throws parplan::Error naming the call, file:line and MPI's error
// string when an MPI call fails (communicators are set to MPI_ERRORS_RETURN).
#pragma once

#include <mpi.h>

#include <string>

#include "core/check.h"

namespace parplan::profiler::detail {
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
}  // namespace parplan::profiler::detail

#define PARPLAN_MPI_CHECK(call)                                                                 \
  do {                                                                                          \
    const int parplan_mpi_rc_ = (call);                                                         \
    if (parplan_mpi_rc_ != MPI_SUCCESS)                                                         \
      ::parplan::profiler::detail::throw_mpi_error(parplan_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
