// What a profiling backend hands back: one record per measurement (GEMM, memory-bound
// kernel, collective) and a description of the device it ran on. The profile writer
// (profile_writer.h) fits and serialises them. Plain data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/gemm_efficiency.h"
#include "core/units.h"
#include "profiler/stopping_rule.h"

namespace parplan::profiler {

struct GemmRecord {
  GemmShape shape;
  std::string precision;  // fp64, fp32, fp16, bf16, fp8
  Measurement time;       // seconds per GEMM (max over ranks)

  double tflops() const { return gemm_flops(shape) / time.median_s / kTera; }
};

struct MemoryBoundRecord {
  std::string kernel;  // copy, triad, layernorm, rmsnorm, gelu, swiglu, softmax
  std::string precision;
  int64_t rows = 0;
  int64_t cols = 0;
  double bytes = 0;  // bytes read + written by one call (no write-allocate traffic counted)
  Measurement time;
  double flops = 0;    // compute kernels (attention): FLOPs of one call instead of bytes
  bool probe = false;  // a kernel of the profiled program (ProfileOptions::kernel_probes)

  double gbps() const { return bytes / time.median_s / kGB; }
};

struct CollectiveRecord {
  Collective op = Collective::AllReduce;
  int64_t group_size = 0;
  std::string span;             // intra_node or inter_node
  double size_bytes = 0;        // nccl-tests S (core/collective.h)
  Measurement time;             // seconds per operation, max over ranks
  double kernel_median_s = -1;  // CUPTI kernel time where measured, else -1

  double algbw_gbps() const { return size_bytes / time.median_s / kGB; }
  double busbw_gbps() const { return algbw_gbps() * bus_factor(op, group_size); }
};

struct DeviceInfo {
  std::string name;
  std::string vendor;        // nvidia, cpu, ...
  std::string architecture;  // GpuSpec::architecture: cpu, ampere, ada, hopper, blackwell, other
  std::string backend;       // cpu, cuda
  double memory_gib = 0;     // per rank
  int64_t sm_count = 0;      // 0 on a CPU (no wave quantisation)
  int64_t compute_capability = 0;  // 90 for sm_90; 0 on a CPU
  double l2_cache_mib = 0;         // GPU L2, or the CPU's last-level cache
  std::string l2_cache_source;
  // Peak figures where the device tells them (0: unknown); with their derivation.
  std::map<std::string, double> peak_tflops;  // by precision
  std::string peak_source;
  double peak_memory_gbps = 0;
  std::string peak_memory_source;
  std::map<std::string, std::string> software;  // compiler, eigen, mpi, cuda, cublas, nccl, cupti
};

struct HostInfo {
  std::string hostname;
  std::string cpu_model;
  std::string cpu_vendor = "other";  // host_info.h cpu_vendor()
  int64_t cores = 0;
  double memory_gib = 0;
};

// Everything one profiling run measured.
struct RawProfile {
  HostInfo host;
  DeviceInfo device;
  int ranks = 1;
  int hosts = 1;
  int ranks_per_host = 1;
  std::vector<GemmRecord> gemm;
  std::vector<MemoryBoundRecord> memory_bound;
  std::vector<CollectiveRecord> collectives;
  std::vector<std::string> warnings;
};

}  // namespace parplan::profiler
