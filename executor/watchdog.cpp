#include "executor/watchdog.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace parplan::executor {

namespace {
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

Watchdog::Watchdog(double timeout_s, int world_rank)
    : timeout_s_(timeout_s), world_rank_(world_rank) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(const char* what) {
  what_.store(what);
  armed_since_ns_.store(now_ns());
}

void Watchdog::disarm() { armed_since_ns_.store(0); }

void Watchdog::run() {
  const auto tick = std::chrono::milliseconds(timeout_s_ < 5 ? 100 : 1000);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, tick, [this] { return stop_; })) {
    const int64_t since = armed_since_ns_.load();
    if (since == 0) continue;
    const double waited_s = static_cast<double>(now_ns() - since) * 1e-9;
    if (waited_s < timeout_s_) continue;
    const char* what = what_.load();
    std::fprintf(stderr,
                 "error: rank %d: %s did not complete within %g s (--comm-timeout); a peer "
                 "rank has probably failed or stalled\n",
                 world_rank_, what != nullptr ? what : "a communication call", timeout_s_);
    std::fflush(stderr);
    std::_Exit(1);
  }
}

}  // namespace parplan::executor
