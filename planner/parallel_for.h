// A small fork-join helper: runs fn(worker, index) for index in [0, n) on `threads` threads
// (worker in [0, threads)), handing out indices in chunks. Results must be written by index so
// they are identical for any thread count. Tested in tests/planner/search_test.cpp.
#pragma once

#include <cstdint>
#include <functional>

namespace parplan::planner {

// threads <= 0: one per hardware thread.
int resolve_threads(int threads);

void parallel_for(int64_t n, int threads, const std::function<void(int worker, int64_t index)>& fn);

}  // namespace parplan::planner
