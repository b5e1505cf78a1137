// Which sub-groups the collective measurements use. For each group size g (powers of two up
// to the world size, and the world size itself) the ranks split into consecutive blocks of g
// (like Megatron's tensor-parallel groups) that all run at once; a layout is intra_node when
// every block lies on one host. With several hosts, one rank per host (strided, like a
// data-parallel group) adds an inter_node layout; each (size, span) appears once, sorted by
// size. Pure functions of the rank -> host map.
// Tested in tests/profiler/collective_groups_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/collective.h"

namespace parplan::profiler {

struct GroupLayout {
  int64_t group_size = 0;
  std::string span;        // intra_node or inter_node
  std::vector<int> color;  // per world rank: the group index, or -1 (not measured)
  std::vector<int> key;    // per world rank: the rank inside its group
};

std::vector<GroupLayout> collective_group_layouts(const std::vector<int>& host_of_rank);

// Element counts (4-byte floats) of one operation at nccl-tests size S over n ranks; per-rank
// blocks are rounded down (at least one element), so size_bytes is the S really used.
struct CollectiveCounts {
  int64_t send = 0;       // elements one rank sends
  int64_t recv = 0;       // elements one rank receives
  int64_t per_rank = 0;   // the count argument: the per-rank block (AG, RS, A2A) or the buffer
  double size_bytes = 0;  // S used
};
CollectiveCounts collective_counts(Collective op, double nominal_bytes, int64_t n);

// The data check shared by the MPI and NCCL benchmarks: what rank r of n sends at element i,
// and what it must receive there (all-reduce and reduce-scatter: the sum of r + 1; all-gather:
// block j holds j + 1; all-to-all: block j holds j n + r + 1; send_recv: the previous rank's
// r + 1). Small integers, exact in float.
float collective_send_value(Collective op, int r, int n, int64_t per_rank, int64_t i);
float collective_expected_value(Collective op, int r, int n, int64_t per_rank, int64_t i);

}  // namespace parplan::profiler
