// The kernel records of CUPTI's Activity API, gathered per measurement window: the logic of
// profiler/cuda/cupti_kernel_timer.cpp without CUDA, so that it is tested on any machine.
// A record whose start and end are both 0 carries no timestamp (cupti_activity.h: the
// timestamps are 0 when they could not be collected): it is skipped, not taken for the
// epoch. Records CUPTI dropped fail the window they were dropped in, and only that one.
// Tested in tests/profiler/kernel_records_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace parplan::profiler {

struct KernelRecord {
  std::string name;  // mangled, as CUPTI reports it
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t grid_x = 0;
};

struct KernelWindow {
  std::vector<KernelRecord> kernels;  // the timestamped records, in arrival order
  double seconds = 0;                 // first start to last end; 0 when none
};

// Filled from CUPTI's buffer-completed callback (any thread), read by the timer.
class KernelRecordCollector {
 public:
  void add(KernelRecord record);
  void add_dropped(std::size_t count);
  // Starts a window: forgets earlier records and drops.
  void begin_window();
  // Ends the window: its timestamped records and their span. Throws parplan::Error when
  // CUPTI dropped records in it; the next window starts clean either way.
  KernelWindow end_window();

 private:
  std::mutex mutex_;
  std::vector<KernelRecord> records_;
  std::size_t dropped_ = 0;
};

}  // namespace parplan::profiler
