// Device-side time of the work enqueued between start() and stop() on one stream. Two
// implementations behind this narrow interface: CUPTI's Activity API (concurrent-kernel
// records, so cuBLAS's internal kernels and NCCL's kernels are all counted; the default) and
// CUDA events (builds without CUPTI). No CUDA types here: the stream is passed as void*.
// Tested by the gpu-labelled tests in tests/gpu.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace parplan::profiler::cuda {

struct KernelRecord {
  std::string name;  // mangled, as CUPTI reports it
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t grid_x = 0;
};

class KernelTimer {
 public:
  virtual ~KernelTimer() = default;
  virtual std::string name() const = 0;
  virtual void start() = 0;
  // Waits for the stream and returns the seconds from the first kernel's start to the last
  // kernel's end among the work since start() (0 when no kernel ran).
  virtual double stop() = 0;
  // The kernels of the last start()/stop() window (CUPTI only; empty for events).
  virtual const std::vector<KernelRecord>& kernels() const = 0;
};

// CUPTI Activity API timer; one per process at a time (CUPTI's buffers are global).
std::unique_ptr<KernelTimer> make_cupti_kernel_timer(void* stream);
// cudaEvent timer.
std::unique_ptr<KernelTimer> make_event_kernel_timer(void* stream);

using KernelTimerFactory = std::unique_ptr<KernelTimer> (*)(void* stream);

// "13.0" style version of CUPTI, or "" when not built with it.
std::string cupti_version();

}  // namespace parplan::profiler::cuda
