// Which backends this build has and how to make them. executor/backends.cpp is the one
// file of the executor that reads the generated parplan/parplan_config.h: the rest of the
// library never asks whether CUDA, NCCL or MPI exist.
//   cpu:  Compute = Eigen on the host; Comm = MPI (or a one-rank SelfComm without MPI).
//   cuda: Compute = cuBLAS + our kernels on the GPU (rank modulo device count); Comm = NCCL,
//         bootstrapped through the MPI host communicator.
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

// Whether the backend was built; `why_not` says what is missing.
bool backend_available(Backend backend, std::string* why_not = nullptr);
bool built_with_mpi();

// The host communicator over all processes of the job: MPI_COMM_WORLD (MPI is initialised
// here and finalised when the object goes), or a one-rank communicator without MPI.
std::unique_ptr<Comm> start_host_world();

// The communicator for the backend's memory over the same ranks as `host` (collective).
std::unique_ptr<Comm> make_device_world(Backend backend, Comm& host);

template <typename T>
std::unique_ptr<Compute<T>> make_compute(Backend backend, int host_rank);

}  // namespace parplan::executor
