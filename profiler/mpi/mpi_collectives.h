// Collective timings over MPI on CPU ranks, as nccl-tests times NCCL: for each group layout
// (collective_groups.h) and size, barrier -> steady_clock -> a loop of operations ->
// steady_clock, max over ranks, repeated under the stopping rule; then every received element
// is checked against the value it must have (a wrong element is an error on every rank).
// MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block, MPI_Alltoall and ring
// MPI_Sendrecv on float buffers. Tested by the mpi-labelled tests in tests/profiler.
#pragma once

#include <memory>

#include "profiler/backend.h"

namespace parplan::profiler {

std::unique_ptr<CollectiveBenchmark> make_mpi_collective_benchmark();

}  // namespace parplan::profiler
