// Which GPU a rank uses, shared by the executor (executor/cuda) and the profiler
// (profiler/cuda): its node-local rank (its index among the ranks on its host, which MPI
// finds with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) modulo the GPUs the host shows. The
// global rank would not do: launched with `mpirun --map-by node` over 2 hosts of 2 GPUs,
// ranks 0 and 2 share host 0 and, by global rank, GPU 0, where NCCL cannot put two ranks.
// Tested in tests/core/gpu_assignment_test.cpp.
#pragma once

#include <vector>

namespace parplan {

// host_of_rank[r]: the host of rank r (any numbering). The number of ranks below `rank` on
// its host.
int node_local_rank(const std::vector<int>& host_of_rank, int rank);

// The GPU of the rank with this node-local rank on a host with `device_count` visible GPUs
// (> 0); ranks beyond the GPU count share them in turn.
int gpu_of_rank(int node_local_rank, int device_count);

}  // namespace parplan
