// Check of MPI calls for the profiler's and the executor's MPI sources (communicators are set
// to MPI_ERRORS_RETURN): a failed call throws parplan::Error through core/backend_check.h with
// MPI's error string.
#pragma once

#include <mpi.h>

#include <string>

#include "core/backend_check.h"

namespace parplan {

// MPI's text for an error code.
inline std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace parplan

#define PARPLAN_MPI_CHECK(call)                                                                  \
  do {                                                                                           \
    const int parplan_mpi_rc_ = (call);                                                          \
    if (parplan_mpi_rc_ != MPI_SUCCESS)                                                          \
      ::parplan::throw_backend_error("MPI", ::parplan::mpi_error_string(parplan_mpi_rc_), #call, \
                                     __FILE__, __LINE__);                                        \
  } while (0)
