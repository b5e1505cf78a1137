#include "executor/memory_tracker.h"

#include "core/check.h"

namespace parplan::executor {

const char* to_string(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::Parameters:
      return "parameters";
    case MemoryKind::Gradients:
      return "gradients";
    case MemoryKind::Optimizer:
      return "optimizer";
    case MemoryKind::Activations:
      return "activations";
    case MemoryKind::Workspace:
      break;
  }
  return "workspace";
}

MemoryTracker::MemoryTracker(std::function<void*(std::size_t)> allocate,
                             std::function<void(void*)> release)
    : allocate_(std::move(allocate)), release_(std::move(release)) {}

void* MemoryTracker::allocate(std::size_t num_bytes, MemoryKind kind) {
  void* ptr = allocate_(num_bytes);
  current_ += static_cast<int64_t>(num_bytes);
  by_kind_[static_cast<int>(kind)] += static_cast<int64_t>(num_bytes);
  if (current_ > peak_) {
    peak_ = current_;
    peak_by_kind_ = by_kind_;
  }
  return ptr;
}

void MemoryTracker::release(void* ptr, std::size_t num_bytes, MemoryKind kind) {
  release_(ptr);
  current_ -= static_cast<int64_t>(num_bytes);
  by_kind_[static_cast<int>(kind)] -= static_cast<int64_t>(num_bytes);
  PARPLAN_ASSERT(current_ >= 0 && by_kind_[static_cast<int>(kind)] >= 0);
}

void MemoryTracker::reset_peak() {
  peak_ = current_;
  peak_by_kind_ = by_kind_;
}

}  // namespace parplan::executor
