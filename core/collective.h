// Collective operations and the nccl-tests bandwidth conventions shared by the profiler
// (which measures them) and the cost model (which predicts them):
//   algbw = S / t,  busbw = algbw * bus_factor(op, n)
// with S the nccl-tests size (all_reduce: the buffer; all_gather / reduce_scatter: the whole
// gathered buffer; all_to_all: the whole send buffer; send_recv: the message) and
// bus_factor all_reduce 2(n-1)/n, all_gather / reduce_scatter / all_to_all (n-1)/n,
// send_recv 1 (nccl-tests doc/PERFORMANCE.md). Tested in tests/core/collective_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace parplan {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };
inline constexpr int kNumCollectives = 5;

const char* to_string(Collective op);  // "all_reduce", ...
std::optional<Collective> parse_collective(std::string_view name);

double bus_factor(Collective op, int64_t group_size);

// Time of a collective moving `size_bytes` (nccl-tests S) at bus bandwidth `busbw_gbps`
// (GB/s, decimal) after a fixed latency: latency + S * bus_factor / busbw.
double collective_time_s(Collective op, int64_t group_size, double size_bytes, double latency_us,
                         double busbw_gbps);

}  // namespace parplan
