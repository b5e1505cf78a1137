#include "profiler/kernel_records.h"

#include <algorithm>
#include <utility>

#include "core/check.h"

namespace parplan::profiler {

void KernelRecordCollector::add(KernelRecord record) {
  if (record.start_ns == 0 && record.end_ns == 0) return;  // no timestamp
  const std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back(std::move(record));
}

void KernelRecordCollector::add_dropped(std::size_t count) {
  const std::lock_guard<std::mutex> lock(mutex_);
  dropped_ += count;
}

void KernelRecordCollector::begin_window() {
  const std::lock_guard<std::mutex> lock(mutex_);
  records_.clear();
  dropped_ = 0;
}

KernelWindow KernelRecordCollector::end_window() {
  KernelWindow window;
  std::size_t dropped = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    window.kernels = std::exchange(records_, {});
    dropped = std::exchange(dropped_, 0);
  }
  PARPLAN_CHECK(dropped == 0, "CUPTI dropped ", dropped,
                " kernel records (activity buffers too small)");
  if (window.kernels.empty()) return window;
  uint64_t first = window.kernels.front().start_ns;
  uint64_t last = window.kernels.front().end_ns;
  for (const KernelRecord& k : window.kernels) {
    first = std::min(first, k.start_ns);
    last = std::max(last, k.end_ns);
  }
  window.seconds = last > first ? static_cast<double>(last - first) * 1e-9 : 0.0;
  return window;
}

}  // namespace parplan::profiler
