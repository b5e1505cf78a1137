// Which backends this build has and how to make them. executor/backends.cpp is the one
// file of the executor that reads the generated parplan/parplan_config.h: the rest of the
// library never asks whether CUDA, NCCL or MPI exist.
//   cpu:  Compute = Eigen on the host; Comm = MPI (or a one-rank SelfComm without MPI).
//   cuda: Compute = cuBLAS + our kernels on the GPU (node-local rank modulo device count);
//         Comm = NCCL, bootstrapped through the host communicator (MPI; one rank needs none).
// Tested in tests/executor/cpu_ops_test.cpp and the mpi tests (tests/executor/mpi_world.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "executor/comm.h"
#include "executor/compute.h"

namespace parplan::executor {

enum class Backend { Cpu, Cuda };
const char* to_string(Backend backend);
std::optional<Backend> parse_backend(std::string_view name);

// What this build has.
struct BuildFeatures {
  bool cuda = false, nccl = false, mpi = false;
};
BuildFeatures build_features();

// "" when a build with `built` can run `backend` on `ranks` ranks, else what is missing.
// One rank needs no MPI on either backend (the one-rank host world; NCCL's unique id then
// needs no broadcast).
std::string backend_missing(Backend backend, const BuildFeatures& built, int64_t ranks);

// backend_missing for this build; `why_not` says what is missing.
bool backend_available(Backend backend, int64_t ranks, std::string* why_not = nullptr);
bool built_with_mpi();

// The host communicator over all processes of the job: MPI_COMM_WORLD (MPI is initialised
// here and finalised when the object goes), or a one-rank communicator without MPI.
std::unique_ptr<Comm> start_host_world();

// The communicator for the backend's memory over the same ranks as `host` (collective).
std::unique_ptr<Comm> make_device_world(Backend backend, Comm& host);

// cuda: GPU gpu_of_rank(node_local_rank, visible GPUs) (core/gpu_assignment.h).
template <typename T>
std::unique_ptr<Compute<T>> make_compute(Backend backend, int host_rank, int node_local_rank);

}  // namespace parplan::executor
