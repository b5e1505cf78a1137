// What a profiling run measures and how long it may take per measurement (parplan profile's
// options, after defaults for --quick are applied by default_profile_options).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/collective.h"
#include "core/gemm_efficiency.h"
#include "profiler/records.h"
#include "profiler/stopping_rule.h"

namespace parplan::profiler {

// A kernel of the program the profile is for (e.g. the executor's CPU ops), timed beside the
// reference kernels. Memory-bound kernels give `bytes` (read + written per call) and land in
// the node's kernel_gbps under `name`; compute kernels give `flops` instead (attention); a
// GEMM gives its `gemm` shape and joins the profile's GEMM measurements at `precision`.
// Supplied by tools/ (which links both the profiler and the executor).
struct KernelProbe {
  std::string name;  // e.g. "gelu_forward", "attention_backward", "gemm"
  int64_t rows = 0;
  int64_t cols = 0;
  double bytes = 0;
  double flops = 0;
  std::function<void()> run;
  GemmShape gemm{0, 0, 0, 1};  // m > 0: a GEMM of this shape
  std::string precision = "fp32";
};

// The memory-bound record of a (non-GEMM) probe measured in `time` (marked probe, so the
// writer puts it in kernel_gbps or attention_tflops).
MemoryBoundRecord probe_record(const KernelProbe& probe, const Measurement& time);

struct ProfileOptions {
  std::string backend = "cpu";
  bool quick = false;
  bool measure_gemm = true;
  bool measure_memory = true;  // bandwidth and the memory-bound kernels
  bool measure_collectives = true;
  std::vector<GemmShape> gemm_shapes;        // empty: the backend's transformer-layer list
  std::vector<std::string> gemm_precisions;  // empty: the backend's list
  std::vector<Collective> collective_ops;    // empty: all five
  std::vector<double> collective_sizes;      // nominal bytes; empty: 8 B doubling to the max
  double max_collective_bytes = 0;           // 0: 64 MiB quick, 1 GiB full (capped by memory)
  StoppingOptions stopping;                  // per measurement
  double target_sample_s = 0.002;            // repetitions per sample are sized to this
  std::function<void(const std::string&)> progress;  // rank 0 progress lines; may be empty
  std::vector<KernelProbe> kernel_probes;            // CPU backend: timed after the references
  // CUDA backend: the program's kernels on the rank's GPU (made once the backend has chosen
  // it, from the node-local rank), enqueued on the legacy default stream and timed there.
  std::function<std::vector<KernelProbe>(int node_local_rank)> device_kernel_probes;
};

// Defaults: full runs stop at 1 % noise (MAD) after >= 5 samples or a 2 s budget; --quick at
// 3 % or 0.25 s.
ProfileOptions default_profile_options(bool quick);

// Sizes 8 B, 16 B, ... doubling up to max_bytes (inclusive when a power of two).
std::vector<double> doubling_sizes(double min_bytes, double max_bytes);

}  // namespace parplan::profiler
