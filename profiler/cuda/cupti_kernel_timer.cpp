// CUPTI Activity API kernel timer (docs/sources/hardware_notes.md §7): records of kind
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (KIND_KERNEL would serialise kernels) arrive in
// buffers CUPTI requests and completes through two callbacks; stop() synchronises the stream
// and forces a flush (cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) so that every
// record of the window is in before it is read. What is done with the records (untimed ones
// skipped, drops failing only their window) is profiler/kernel_records.h.
#include <cuda_runtime.h>
#include <cupti.h>

#include <cstdlib>
#include <utility>

#include "core/cuda/cuda_check.h"
#include "core/cuda/cupti_check.h"
#include "profiler/cuda/kernel_timer.h"

namespace parplan::profiler::cuda {

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT

// CUPTI calls plain functions: the records go to one process-wide collector.
KernelRecordCollector& collector() {
  static KernelRecordCollector c;
  return c;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                               size_t valid_size) {
  KernelRecordCollector& c = collector();
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    // CUDA 13 writes CUpti_ActivityKernel10; the fields read here sit in every version.
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    c.add({kernel->name != nullptr ? kernel->name : "", kernel->start, kernel->end,
           static_cast<uint32_t>(kernel->gridX)});
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    c.add_dropped(dropped);
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
    collector().begin_window();
  }

  double stop() override {
    PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    PARPLAN_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    kernels_.clear();
    KernelWindow window = collector().end_window();
    kernels_ = std::move(window.kernels);
    return window.seconds;
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
