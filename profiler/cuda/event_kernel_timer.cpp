// cudaEvent kernel timer, for builds without CUPTI: the elapsed time between two events
// around the work (includes gaps between kernels and launch latency inside the window).
#include <cuda_runtime.h>

#include "core/cuda/cuda_check.h"
#include "core/units.h"
#include "profiler/cuda/kernel_timer.h"

namespace parplan::profiler::cuda {

namespace {

class EventKernelTimer final : public KernelTimer {
 public:
  explicit EventKernelTimer(void* stream) : stream_(static_cast<cudaStream_t>(stream)) {
    PARPLAN_CUDA_CHECK(cudaEventCreate(&begin_));
    PARPLAN_CUDA_CHECK(cudaEventCreate(&end_));
  }
  ~EventKernelTimer() override {
    cudaEventDestroy(begin_);
    cudaEventDestroy(end_);
  }
  std::string name() const override { return "CUDA events"; }
  void start() override { PARPLAN_CUDA_CHECK(cudaEventRecord(begin_, stream_)); }
  double stop() override {
    PARPLAN_CUDA_CHECK(cudaEventRecord(end_, stream_));
    PARPLAN_CUDA_CHECK(cudaEventSynchronize(end_));
    float ms = 0;
    PARPLAN_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    return static_cast<double>(ms) * kMs;
  }
  const std::vector<KernelRecord>& kernels() const override { return none_; }

 private:
  cudaStream_t stream_;
  cudaEvent_t begin_ = nullptr;
  cudaEvent_t end_ = nullptr;
  std::vector<KernelRecord> none_;
};

}  // namespace

std::unique_ptr<KernelTimer> make_event_kernel_timer(void* stream) {
  return std::make_unique<EventKernelTimer>(stream);
}

}  // namespace parplan::profiler::cuda
