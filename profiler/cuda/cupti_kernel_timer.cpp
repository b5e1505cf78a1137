// CUPTI Activity API kernel timer (docs/sources/hardware_notes.md §7): records of kind
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (KIND_KERNEL would serialise kernels) arrive in
// buffers CUPTI requests and completes through two callbacks; stop() synchronises the stream
// and forces a flush (cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) so that every
// record of the window is in before it is read.
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cupti_check.h"
#include "profiler/cuda/kernel_timer.h"

namespace parplan::profiler::cuda {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT

// CUPTI calls plain functions: the records go to one process-wide collector.
struct Collector {
  std::mutex mutex;
  std::vector<KernelRecord> records;
  std::size_t dropped = 0;
};
Collector& collector() {
  static Collector c;
  return c;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                               size_t valid_size) {
  Collector& c = collector();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
      // CUDA 13 writes CUpti_ActivityKernel10; the fields read here sit in every version.
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      c.records.push_back({kernel->name != nullptr ? kernel->name : "", kernel->start, kernel->end,
                           static_cast<uint32_t>(kernel->gridX)});
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
      c.dropped += dropped;
    }
  }
  std::free(buffer);
}

class CuptiKernelTimer final : public KernelTimer {
 public:
  explicit CuptiKernelTimer(void* stream) : stream_(static_cast<cudaStream_t>(stream)) {
    PARPLAN_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    PARPLAN_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  }
  ~CuptiKernelTimer() override {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  }

  std::string name() const override { return "CUPTI activity (concurrent kernels)"; }

  void start() override {
    PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    PARPLAN_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    std::lock_guard<std::mutex> lock(collector().mutex);
    collector().records.clear();
  }

  double stop() override {
    PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    PARPLAN_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    std::lock_guard<std::mutex> lock(collector().mutex);
    PARPLAN_CHECK(collector().dropped == 0, "CUPTI dropped ", collector().dropped,
                  " kernel records (activity buffers too small)");
    kernels_ = std::move(collector().records);
    collector().records.clear();
    if (kernels_.empty()) return 0.0;
    uint64_t first = kernels_.front().start_ns;
    uint64_t last = kernels_.front().end_ns;
    for (const auto& k : kernels_) {
      first = std::min(first, k.start_ns);
      last = std::max(last, k.end_ns);
    }
    return static_cast<double>(last - first) * 1e-9;
  }

  const std::vector<KernelRecord>& kernels() const override { return kernels_; }

 private:
  cudaStream_t stream_;
  std::vector<KernelRecord> kernels_;
};

}  // namespace

std::unique_ptr<KernelTimer> make_cupti_kernel_timer(void* stream) {
  return std::make_unique<CuptiKernelTimer>(stream);
}

std::string cupti_version() {
  uint32_t version = 0;
  if (cuptiGetVersion(&version) != CUPTI_SUCCESS) return "unknown";
  return "API " + std::to_string(version);
}

}  // namespace parplan::profiler::cuda
