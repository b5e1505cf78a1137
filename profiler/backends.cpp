// The profiler's backend registry: the only file of parplan_profiler that reads the
// generated parplan/parplan_config.h, so that which backends, process groups, kernel timers
// and collective benchmarks exist is decided here, once, by file-level alternatives.
// Tested by tests/profiler (cpu always; the error for cuda in a build without it) and the
// gpu-labelled tests.
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
#include "profiler/cuda/kernel_timer.h"
#endif
#if PARPLAN_HAVE_NCCL
#include "profiler/cuda/nccl_collectives.h"
#endif

namespace parplan::profiler {

namespace {

#if PARPLAN_HAVE_MPI
std::unique_ptr<CollectiveBenchmark> cpu_collectives() { return make_mpi_collective_benchmark(); }
std::unique_ptr<ProcessGroup> process_group() { return make_mpi_process_group(); }
#else
std::unique_ptr<CollectiveBenchmark> cpu_collectives() { return nullptr; }
std::unique_ptr<ProcessGroup> process_group() { return make_single_process_group(); }
#endif

#if PARPLAN_HAVE_CUDA
#if PARPLAN_HAVE_CUPTI
// Kernel durations through CUPTI's Activity API (attributes cuBLAS's and NCCL's kernels).
cuda::KernelTimerFactory kernel_timers(std::map<std::string, std::string>& software) {
  software["cupti"] = cuda::cupti_version();
  return cuda::make_cupti_kernel_timer;
}
#else
cuda::KernelTimerFactory kernel_timers(std::map<std::string, std::string>&) {
  return cuda::make_event_kernel_timer;
}
#endif
#if PARPLAN_HAVE_NCCL
std::unique_ptr<CollectiveBenchmark> gpu_collectives(cuda::KernelTimerFactory timers,
                                                     std::map<std::string, std::string>& software) {
  software["nccl"] = cuda::nccl_version();
  return cuda::make_nccl_collective_benchmark(timers);
}
#else
std::unique_ptr<CollectiveBenchmark> gpu_collectives(cuda::KernelTimerFactory,
                                                     std::map<std::string, std::string>&) {
  return nullptr;
}
#endif
std::unique_ptr<Backend> cuda_backend() {
  auto software = build_software_versions();
  const cuda::KernelTimerFactory timers = kernel_timers(software);
  auto collectives = gpu_collectives(timers, software);
  return cuda::make_cuda_backend(std::move(software), std::move(collectives), timers);
}
#else
std::unique_ptr<Backend> cuda_backend() {
  throw Error(
      "--backend cuda: this parplan was built without CUDA (no nvcc found at configure time, or "
      "-DPARPLAN_ENABLE_CUDA=OFF); backends in this build: cpu");
}
#endif

}  // namespace

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
  if (name == "cpu") return make_cpu_backend(cpu_collectives(), build_software_versions());
  if (name == "cuda") return cuda_backend();
  std::string names;
  for (const auto& n : available_backends()) names += (names.empty() ? "" : ", ") + n;
  throw InputError("", "--backend", "\"" + name + "\"", names);
}

std::unique_ptr<ProcessGroup> start_process_group() { return process_group(); }

}  // namespace parplan::profiler
