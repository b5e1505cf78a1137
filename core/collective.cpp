#include "core/collective.h"

#include <array>

#include "core/units.h"

namespace parplan {

namespace {
constexpr std::array<const char*, kNumCollectives> kNames = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"};
}  // namespace

const char* to_string(Collective op) { return kNames[static_cast<int>(op)]; }

std::optional<Collective> parse_collective(std::string_view name) {
  for (int i = 0; i < kNumCollectives; ++i) {
    if (name == kNames[i]) return static_cast<Collective>(i);
  }
  return std::nullopt;
}

double bus_factor(Collective op, int64_t group_size) {
  const double n = static_cast<double>(group_size);
  if (group_size <= 1) return 0.0;
  switch (op) {
    case Collective::AllReduce:
      return 2.0 * (n - 1.0) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
      return (n - 1.0) / n;
    case Collective::SendRecv:
      return 1.0;
  }
  return 1.0;
}

double collective_time_s(Collective op, int64_t group_size, double size_bytes, double latency_us,
                         double busbw_gbps) {
  const double factor = op == Collective::SendRecv ? 1.0 : bus_factor(op, group_size);
  if (factor == 0.0) return 0.0;
  return latency_us * kUs + size_bytes * factor / (busbw_gbps * kGB);
}

}  // namespace parplan
