// The executor's own allocation tracking: every buffer a rank holds in backend memory goes
// through one MemoryTracker, which records the current and peak bytes and, at the peak, how
// they split by kind (parameters, gradients, optimizer state, activations, ...). This is
// the "measured peak memory" that `parplan run` reports. DeviceBuffer<E> is the owning,
// move-only handle. Tested in tests/executor/measurement_test.cpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>

namespace parplan::executor {

// Activations: kept from a forward pass for its backward pass (and pipeline messages);
// Workspace: temporaries of one op or layer.
enum class MemoryKind { Parameters, Gradients, Optimizer, Activations, Workspace };
inline constexpr int kNumMemoryKinds = 5;
const char* to_string(MemoryKind kind);

class MemoryTracker {
 public:
  MemoryTracker(std::function<void*(std::size_t)> allocate, std::function<void(void*)> release);

  void* allocate(std::size_t num_bytes, MemoryKind kind);
  void release(void* ptr, std::size_t num_bytes, MemoryKind kind);

  int64_t current_bytes() const { return current_; }
  int64_t peak_bytes() const { return peak_; }
  // Bytes by kind at the moment the peak was reached.
  const std::array<int64_t, kNumMemoryKinds>& peak_by_kind() const { return peak_by_kind_; }
  // Forget the peak (keep what is allocated), e.g. after setup.
  void reset_peak();

 private:
  std::function<void*(std::size_t)> allocate_;
  std::function<void(void*)> release_;
  int64_t current_ = 0;
  int64_t peak_ = 0;
  std::array<int64_t, kNumMemoryKinds> by_kind_{};
  std::array<int64_t, kNumMemoryKinds> peak_by_kind_{};
};

// An owning buffer of `size` elements of E in the tracker's memory (uninitialised).
template <typename E>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(MemoryTracker& tracker, int64_t size, MemoryKind kind)
      : tracker_(&tracker), size_(size), kind_(kind) {
    data_ = static_cast<E*>(tracker.allocate(bytes(), kind));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      tracker_ = std::exchange(other.tracker_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      kind_ = other.kind_;
    }
    return *this;
  }

  void reset() {
    if (data_ != nullptr) tracker_->release(data_, bytes(), kind_);
    data_ = nullptr;
    size_ = 0;
  }

  E* data() const { return data_; }
  int64_t size() const { return size_; }
  std::size_t bytes() const { return static_cast<std::size_t>(size_) * sizeof(E); }
  bool empty() const { return data_ == nullptr; }

 private:
  MemoryTracker* tracker_ = nullptr;
  E* data_ = nullptr;
  int64_t size_ = 0;
  MemoryKind kind_ = MemoryKind::Workspace;
};

}  // namespace parplan::executor
