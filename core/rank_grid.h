// RankGrid: global ranks as coordinates on named parallel dimensions, Megatron style.
//
// The order string lists dimensions fastest-varying first: with order "tp-cp-dp-pp" and sizes
// tp=2, cp=1, dp=2, pp=2, rank = tp + 2*(cp + 1*(dp + 2*pp)). A group over some dimensions
// holds the ranks that share every other coordinate. Worked example (Megatron-LM
// parallel_state docstring): order tp-dp-pp, sizes 2-2-2 -> dp groups [0,2],[1,3],[4,6],[5,7];
// tp groups [0,1],[2,3],[4,5],[6,7]; pp groups [0,4],[1,5],[2,6],[3,7].
// Pure arithmetic, no communicator. Tested against a naive nested loop in
// tests/core/rank_grid_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace parplan {

class RankGrid {
 public:
  struct Dim {
    std::string name;
    int64_t size;
  };

  // dims fastest-varying first.
  explicit RankGrid(std::vector<Dim> dims);
  // From an order string such as "tp-cp-dp-pp" and the sizes by name; names missing from
  // `sizes` have size 1.
  static RankGrid from_order(std::string_view order, const std::vector<Dim>& sizes);

  int64_t world_size() const { return world_size_; }
  const std::vector<Dim>& dims() const { return dims_; }
  int64_t size_of(std::string_view name) const;
  int64_t stride_of(std::string_view name) const;

  std::vector<int64_t> coords(int64_t rank) const;
  int64_t rank(const std::vector<int64_t>& coords) const;
  int64_t coord(int64_t rank, std::string_view name) const;

  // All groups over the named dimensions (e.g. {"tp"} or {"dp", "cp"}); ranks ascending.
  std::vector<std::vector<int64_t>> groups(const std::vector<std::string>& names) const;
  // The group over `names` that holds `rank`, ranks ascending.
  std::vector<int64_t> group_of(int64_t rank, const std::vector<std::string>& names) const;

 private:
  int dim_index(std::string_view name) const;  // -1 when absent
  std::vector<Dim> dims_;
  std::vector<int64_t> strides_;
  int64_t world_size_ = 1;
};

}  // namespace parplan
