// The executor's backend registry: the only file of the library that includes the generated
// configuration header (see executor/backends.h).
#include "executor/backends.h"

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

bool backend_available(Backend backend, std::string* why_not) {
  if (backend == Backend::Cpu) return true;
  if (!PARPLAN_HAVE_CUDA) {
    if (why_not) *why_not = "this parplan was built without CUDA (no nvcc found at configure time)";
    return false;
  }
  if (!PARPLAN_HAVE_NCCL) {
    if (why_not) *why_not = "this parplan was built without NCCL (set NCCL_HOME and reconfigure)";
    return false;
  }
  if (!PARPLAN_HAVE_MPI) {
    if (why_not) *why_not = "the cuda backend needs MPI to start NCCL; this parplan has no MPI";
    return false;
  }
  return true;
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
  PARPLAN_CHECK(backend_available(backend, &why_not), "backend ", to_string(backend),
                " is not available: ", why_not);
  if (backend == Backend::Cpu) return host.split(0, host.rank());
#if PARPLAN_HAVE_CUDA && PARPLAN_HAVE_NCCL
  return make_nccl_world(host);
#else
  throw Error("backend cuda is not available");
#endif
}

template <typename T>
std::unique_ptr<Compute<T>> make_compute(Backend backend, int host_rank) {
  if (backend == Backend::Cpu) return make_cpu_compute<T>();
#if PARPLAN_HAVE_CUDA
  return make_cuda_compute<T>(host_rank);
#else
  (void)host_rank;
  throw Error("backend cuda is not available: this parplan was built without CUDA");
#endif
}

template std::unique_ptr<Compute<float>> make_compute<float>(Backend, int);
template std::unique_ptr<Compute<double>> make_compute<double>(Backend, int);

}  // namespace parplan::executor
