// The CPU backend: Eigen GEMMs (fp32 and fp64) over the transformer-layer shapes, STREAM-like
// copy and triad over buffers much larger than the last-level cache, the memory-bound
// reference kernels, and (given a CollectiveBenchmark, MPI in this build) the collectives.
// Every rank measures at once; samples are the slowest rank's (cpu_timing.h). One rank is
// one device: Eigen runs single-threaded unless built with OpenMP.
// Tested in tests/profiler/cpu_backend_test.cpp and the profile integration tests.
#pragma once

#include <memory>

#include "profiler/backend.h"

namespace parplan::profiler {

// Times GEMM shapes with Eigen at "fp32" or "fp64" on every rank, interleaved
// (run_interleaved) in chunks of at most 256 MiB of operands.
std::vector<GemmRecord> measure_cpu_gemms(ProcessGroup& group, const std::vector<GemmShape>& shapes,
                                          const std::string& precision,
                                          const ProfileOptions& options);

// STREAM copy (c = a) and triad (b = a + s c) on doubles, interleaved, bytes counted as
// STREAM does (no write-allocate traffic).
std::vector<MemoryBoundRecord> measure_cpu_memory_bandwidth(ProcessGroup& group,
                                                            const ProfileOptions& options,
                                                            double array_bytes);

std::unique_ptr<Backend> make_cpu_backend(std::unique_ptr<CollectiveBenchmark> collectives,
                                          std::map<std::string, std::string> software);

}  // namespace parplan::profiler
