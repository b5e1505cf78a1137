// DeferredError: the first failure of a call that must not throw, kept until a call that may
// throw reports it. A buffer's release runs from ~DeviceBuffer and its noexcept move
// assignment: a throw there ends in std::terminate during unwinding, and the abort-all-ranks
// path of `parplan run` never runs (the other ranks wait for their watchdog). The CUDA
// backend records a failed cudaFreeAsync here and throws it from its next allocation or
// synchronisation. Tested in tests/executor/measurement_test.cpp.
#pragma once

#include <string>

#include "core/check.h"

namespace parplan::executor {

class DeferredError {
 public:
  // Keeps the first failure; never throws.
  void record(const char* call, const char* message) noexcept {
    if (pending_) return;
    pending_ = true;
    try {
      first_ = std::string(call) + " failed: " + message;
    } catch (...) {
      first_.clear();  // out of memory: report the failure without its text
    }
  }
  bool pending() const noexcept { return pending_; }
  // Throws the kept failure (once) as parplan::Error.
  void rethrow_if_pending() {
    if (!pending_) return;
    pending_ = false;
    throw Error(first_.empty() ? std::string("a release failed") : first_);
  }

 private:
  bool pending_ = false;
  std::string first_;
};

}  // namespace parplan::executor
