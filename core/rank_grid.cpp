#include "core/rank_grid.h"

#include <algorithm>

#include "core/check.h"

namespace parplan {

RankGrid::RankGrid(std::vector<Dim> dims) : dims_(std::move(dims)) {
  for (const auto& dim : dims_) {
    PARPLAN_CHECK(dim.size >= 1, "rank grid dimension ", dim.name, " has size ", dim.size);
    strides_.push_back(world_size_);
    world_size_ *= dim.size;
  }
}

RankGrid RankGrid::from_order(std::string_view order, const std::vector<Dim>& sizes) {
  std::vector<Dim> dims;
  std::size_t start = 0;
  while (start <= order.size()) {
    const std::size_t end = std::min(order.find('-', start), order.size());
    const std::string name(order.substr(start, end - start));
    int64_t size = 1;
    for (const auto& s : sizes) {
      if (s.name == name) size = s.size;
    }
    dims.push_back({name, size});
    start = end + 1;
  }
  for (const auto& s : sizes) {
    const bool listed =
        std::any_of(dims.begin(), dims.end(), [&](const Dim& d) { return d.name == s.name; });
    PARPLAN_CHECK(listed || s.size == 1, "rank order \"", order, "\" lacks dimension ", s.name);
  }
  return RankGrid(std::move(dims));
}

int RankGrid::dim_index(std::string_view name) const {
  for (std::size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int64_t RankGrid::size_of(std::string_view name) const {
  const int i = dim_index(name);
  return i < 0 ? 1 : dims_[i].size;
}

int64_t RankGrid::stride_of(std::string_view name) const {
  const int i = dim_index(name);
  return i < 0 ? world_size_ : strides_[i];
}

std::vector<int64_t> RankGrid::coords(int64_t rank) const {
  PARPLAN_ASSERT(rank >= 0 && rank < world_size_);
  std::vector<int64_t> out(dims_.size());
  for (std::size_t i = 0; i < dims_.size(); ++i) out[i] = (rank / strides_[i]) % dims_[i].size;
  return out;
}

int64_t RankGrid::rank(const std::vector<int64_t>& coords) const {
  PARPLAN_ASSERT(coords.size() == dims_.size());
  int64_t r = 0;
  for (std::size_t i = 0; i < dims_.size(); ++i) r += coords[i] * strides_[i];
  return r;
}

int64_t RankGrid::coord(int64_t rank, std::string_view name) const {
  const int i = dim_index(name);
  return i < 0 ? 0 : (rank / strides_[i]) % dims_[i].size;
}

std::vector<int64_t> RankGrid::group_of(int64_t rank, const std::vector<std::string>& names) const {
  std::vector<int64_t> base = coords(rank);
  std::vector<int> varying;
  for (const auto& name : names) {
    const int i = dim_index(name);
    if (i >= 0) {
      varying.push_back(i);
      base[i] = 0;
    }
  }
  int64_t group_size = 1;
  for (int i : varying) group_size *= dims_[i].size;
  std::vector<int64_t> out;
  out.reserve(group_size);
  const int64_t base_rank = this->rank(base);
  for (int64_t k = 0; k < group_size; ++k) {
    int64_t rest = k;
    int64_t r = base_rank;
    for (int i : varying) {
      r += (rest % dims_[i].size) * strides_[i];
      rest /= dims_[i].size;
    }
    out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::vector<int64_t>> RankGrid::groups(const std::vector<std::string>& names) const {
  std::vector<std::vector<int64_t>> out;
  std::vector<bool> seen(world_size_, false);
  for (int64_t r = 0; r < world_size_; ++r) {
    if (seen[r]) continue;
    auto group = group_of(r, names);
    for (int64_t member : group) seen[member] = true;
    out.push_back(std::move(group));
  }
  return out;
}

}  // namespace parplan
