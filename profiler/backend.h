// A profiling backend measures GEMMs, memory bandwidth, memory-bound kernels and collectives
// on one kind of device and returns the raw records (records.h). Backends are created by name
// in backends.cpp, the only file that knows which ones this build has.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "profiler/process_group.h"
#include "profiler/profile_options.h"
#include "profiler/records.h"

namespace parplan::profiler {

// Times the collectives over the ranks of a group (MPI on CPUs, NCCL on GPUs).
class CollectiveBenchmark {
 public:
  virtual ~CollectiveBenchmark() = default;
  virtual std::string name() const = 0;
  virtual std::vector<CollectiveRecord> run(ProcessGroup& group, const ProfileOptions& options,
                                            std::vector<std::string>& warnings) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual RawProfile run(ProcessGroup& group, const ProfileOptions& options) = 0;
};

// --- backends.cpp ---
std::vector<std::string> available_backends();  // "cpu", and "cuda" when built with CUDA
// Throws parplan::Error naming the backends this build has when `name` is not one of them.
std::unique_ptr<Backend> make_backend(const std::string& name);
// MPI when built with it (works without mpirun as a singleton), else one process.
std::unique_ptr<ProcessGroup> start_process_group();
// Compiler and library versions of this build, for the profile's device.software.
std::map<std::string, std::string> build_software_versions();

// Collective sizes for a run: the options' list, or 8 B doubling up to the default maximum
// (64 MiB quick, 1 GiB full), capped so that `buffers_per_rank` buffers of the largest size
// on every rank of a host fit in a quarter of `free_bytes`.
std::vector<double> collective_sizes(const ProfileOptions& options, int ranks_on_host,
                                     double free_bytes, double buffers_per_rank,
                                     std::vector<std::string>& warnings);

}  // namespace parplan::profiler
