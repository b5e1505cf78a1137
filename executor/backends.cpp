// The executor's backend registry: the only file of the library that includes the generated
// configuration header (see executor/backends.h).
#include "executor/backends.h"

#include <string>

#include "core/check.h"
#include "executor/cpu/cpu_compute.h"
#include "executor/self_comm.h"
#include "parplan/parplan_config.h"

#if PARPLAN_HAVE_MPI
#include "executor/mpi/mpi_comm.h"
#endif
#if PARPLAN_HAVE_CUDA
#include "executor/cuda/cuda_compute.h"
#endif
#if PARPLAN_HAVE_NCCL
#include "executor/nccl/nccl_comm.h"
#endif

namespace parplan::executor {

const char* to_string(Backend backend) { return backend == Backend::Cuda ? "cuda" : "cpu"; }

std::optional<Backend> parse_backend(std::string_view name) {
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  return std::nullopt;
}

bool built_with_mpi() { return PARPLAN_HAVE_MPI != 0; }

BuildFeatures build_features() {
  return {PARPLAN_HAVE_CUDA != 0, PARPLAN_HAVE_NCCL != 0, PARPLAN_HAVE_MPI != 0};
}

std::string backend_missing(Backend backend, const BuildFeatures& built, int64_t ranks) {
  if (backend == Backend::Cpu) return "";
  if (!built.cuda) return "this parplan was built without CUDA (no nvcc found at configure time)";
  if (!built.nccl) return "this parplan was built without NCCL (set NCCL_HOME and reconfigure)";
  if (!built.mpi && ranks > 1) {
    return "the cuda backend needs MPI to start NCCL on " + std::to_string(ranks) +
           " ranks; this parplan has no MPI (one rank needs none)";
  }
  return "";
}

bool backend_available(Backend backend, int64_t ranks, std::string* why_not) {
  const std::string missing = backend_missing(backend, build_features(), ranks);
  if (why_not) *why_not = missing;
  return missing.empty();
}

std::unique_ptr<Comm> start_host_world() {
#if PARPLAN_HAVE_MPI
  return make_mpi_world();
#else
  return make_self_comm(0);
#endif
}

std::unique_ptr<Comm> make_device_world(Backend backend, Comm& host) {
  std::string why_not;
  PARPLAN_CHECK(backend_available(backend, host.size(), &why_not), "backend ", to_string(backend),
                " is not available: ", why_not);
  if (backend == Backend::Cpu) return host.split(0, host.rank());
#if PARPLAN_HAVE_CUDA && PARPLAN_HAVE_NCCL
  return make_nccl_world(host);
#else
  throw Error("backend cuda is not available");
#endif
}

template <typename T>
std::unique_ptr<Compute<T>> make_compute(Backend backend, int host_rank, int node_local_rank) {
  if (backend == Backend::Cpu) return make_cpu_compute<T>();
#if PARPLAN_HAVE_CUDA
  return make_cuda_compute<T>(host_rank, node_local_rank);
#else
  (void)host_rank;
  (void)node_local_rank;
  throw Error("backend cuda is not available: this parplan was built without CUDA");
#endif
}

template std::unique_ptr<Compute<float>> make_compute<float>(Backend, int, int);
template std::unique_ptr<Compute<double>> make_compute<double>(Backend, int, int);

}  // namespace parplan::executor
