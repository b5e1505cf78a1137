// Watchdog: a background thread that ends this process when one communication call has been
// waiting longer than a timeout, naming the rank and the call, so that a dead or stalled
// peer turns into a clear error instead of a hang. mpirun then ends the other ranks.
// Tested in tests/executor/measurement_test.cpp (death test).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace parplan::executor {

class Watchdog {
 public:
  // timeout_s <= 0 disables it (no thread).
  Watchdog(double timeout_s, int world_rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // `what` must stay valid until disarm() (a string literal).
  void arm(const char* what);
  void disarm();

 private:
  void run();

  double timeout_s_;
  int world_rank_;
  std::atomic<int64_t> armed_since_ns_{0};
  std::atomic<const char*> what_{nullptr};
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace parplan::executor
