#include "planner/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace parplan::planner {

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void parallel_for(int64_t n, int threads, const std::function<void(int, int64_t)>& fn) {
  threads = std::max(
      1, std::min<int>(resolve_threads(threads), static_cast<int>(std::max<int64_t>(1, n))));
  if (threads == 1) {
    for (int64_t i = 0; i < n; ++i) fn(0, i);
    return;
  }
  constexpr int64_t kChunk = 16;
  std::atomic<int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&](int worker) {
    try {
      for (;;) {
        const int64_t begin = next.fetch_add(kChunk);
        if (begin >= n) break;
        const int64_t end = std::min(n, begin + kChunk);
        for (int64_t i = begin; i < end; ++i) fn(worker, i);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next.store(n);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace parplan::planner
