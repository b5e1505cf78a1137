// MpiComm: Comm over MPI for host memory (the CPU executor), one MPI communicator per group
// (MPI_Comm_split). MPI errors return codes (MPI_ERRORS_RETURN) that become parplan::Error
// naming the rank and the call. Tested in tests/executor/comm_test.cpp (mpi).
#pragma once

#include <memory>

#include "executor/comm.h"

namespace parplan::executor {

// MPI_COMM_WORLD; initialises MPI when needed, and finalises it when the returned object is
// destroyed (destroy every communicator split from it first).
std::unique_ptr<Comm> make_mpi_world();

}  // namespace parplan::executor
