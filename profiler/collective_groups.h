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

namespace parplan::profiler {

struct GroupLayout {
  int64_t group_size = 0;
  std::string span;        // intra_node or inter_node
  std::vector<int> color;  // per world rank: the group index, or -1 (not measured)
  std::vector<int> key;    // per world rank: the rank inside its group
};

std::vector<GroupLayout> collective_group_layouts(const std::vector<int>& host_of_rank);

}  // namespace parplan::profiler
