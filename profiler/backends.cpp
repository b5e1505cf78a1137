// The profiler's backend registry: the only file of parplan_profiler that reads the
// generated parplan/parplan_config.h, so that which backends, process groups and collective
// benchmarks exist is decided in one place. Tested by tests/profiler (cpu always; the error
// for cuda in a build without it) and the gpu-labelled tests.
#include <cstdio>

#include "core/check.h"
#include "parplan/parplan_config.h"
#include "profiler/backend.h"
#include "profiler/cpu_backend.h"

#if PARPLAN_HAVE_MPI
#include "profiler/mpi/mpi_collectives.h"
#include "profiler/mpi/mpi_process_group.h"
#endif
#if PARPLAN_HAVE_CUDA
#include "profiler/cuda/cuda_backend.h"
#endif

namespace parplan::profiler {

std::vector<std::string> available_backends() {
  std::vector<std::string> names = {"cpu"};
  if (PARPLAN_HAVE_CUDA) names.push_back("cuda");
  return names;
}

std::map<std::string, std::string> build_software_versions() {
  std::map<std::string, std::string> versions;
#if defined(__clang__)
  versions["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  versions["compiler"] = std::string("gcc ") + __VERSION__;
#endif
  versions["parplan"] = PARPLAN_VERSION;
  return versions;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  std::unique_ptr<CollectiveBenchmark> mpi_collectives;
#if PARPLAN_HAVE_MPI
  mpi_collectives = make_mpi_collective_benchmark();
#endif
  if (name == "cpu") return make_cpu_backend(std::move(mpi_collectives), build_software_versions());
  if (name == "cuda") {
#if PARPLAN_HAVE_CUDA
    return make_cuda_backend(build_software_versions());
#else
    throw Error(
        "--backend cuda: this parplan was built without CUDA (no nvcc found at configure time, or "
        "-DPARPLAN_ENABLE_CUDA=OFF); backends in this build: cpu");
#endif
  }
  std::string names;
  for (const auto& n : available_backends()) names += (names.empty() ? "" : ", ") + n;
  throw InputError("", "--backend", "\"" + name + "\"", names);
}

std::unique_ptr<ProcessGroup> start_process_group() {
#if PARPLAN_HAVE_MPI
  return make_mpi_process_group();
#else
  return make_single_process_group();
#endif
}

}  // namespace parplan::profiler
