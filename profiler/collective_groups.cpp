#include "profiler/collective_groups.h"

#include <algorithm>
#include <map>
#include <set>

namespace parplan::profiler {

namespace {

// Fills span from the hosts of each group's members.
void classify(GroupLayout& layout, const std::vector<int>& host_of_rank) {
  std::map<int, std::set<int>> hosts_of_group;
  for (std::size_t r = 0; r < layout.color.size(); ++r) {
    if (layout.color[r] >= 0) hosts_of_group[layout.color[r]].insert(host_of_rank[r]);
  }
  const bool crosses = std::any_of(hosts_of_group.begin(), hosts_of_group.end(),
                                   [](const auto& entry) { return entry.second.size() > 1; });
  layout.span = crosses ? "inter_node" : "intra_node";
}

}  // namespace

std::vector<GroupLayout> collective_group_layouts(const std::vector<int>& host_of_rank) {
  const int world = static_cast<int>(host_of_rank.size());
  std::vector<GroupLayout> layouts;
  // A (size, span) is measured once; the strided layout comes first so that it wins over a
  // consecutive layout of the same size whose blocks straddle hosts unevenly.
  std::set<std::pair<int64_t, std::string>> seen;
  auto add = [&](GroupLayout layout) {
    classify(layout, host_of_rank);
    if (seen.insert({layout.group_size, layout.span}).second) layouts.push_back(std::move(layout));
  };
  // One rank per host: the local rank-th rank of every host forms a group.
  const int hosts =
      host_of_rank.empty() ? 0 : *std::max_element(host_of_rank.begin(), host_of_rank.end()) + 1;
  if (hosts > 1) {
    GroupLayout layout;
    layout.group_size = hosts;
    layout.color.assign(static_cast<std::size_t>(world), -1);
    layout.key.assign(static_cast<std::size_t>(world), 0);
    std::vector<int> seen_on_host(static_cast<std::size_t>(hosts), 0);
    std::vector<int> count_of_local(static_cast<std::size_t>(world), 0);
    for (int r = 0; r < world; ++r) {
      const int local = seen_on_host[static_cast<std::size_t>(host_of_rank[r])]++;
      layout.color[static_cast<std::size_t>(r)] = local;
      layout.key[static_cast<std::size_t>(r)] = host_of_rank[static_cast<std::size_t>(r)];
      ++count_of_local[static_cast<std::size_t>(local)];
    }
    // Only complete groups (a rank with that local index on every host).
    for (int r = 0; r < world; ++r) {
      if (count_of_local[static_cast<std::size_t>(layout.color[static_cast<std::size_t>(r)])] !=
          hosts) {
        layout.color[static_cast<std::size_t>(r)] = -1;
      }
    }
    add(std::move(layout));
  }
  std::vector<int> sizes;
  for (int g = 2; g <= world; g *= 2) sizes.push_back(g);
  if (world > 1 && (sizes.empty() || sizes.back() != world)) sizes.push_back(world);
  for (int g : sizes) {
    GroupLayout layout;
    layout.group_size = g;
    layout.color.assign(static_cast<std::size_t>(world), -1);
    layout.key.assign(static_cast<std::size_t>(world), 0);
    const int used = (world / g) * g;
    for (int r = 0; r < used; ++r) {
      layout.color[static_cast<std::size_t>(r)] = r / g;
      layout.key[static_cast<std::size_t>(r)] = r % g;
    }
    add(std::move(layout));
  }
  // Smaller groups first; for one size the inter_node layout before the intra_node one.
  std::stable_sort(layouts.begin(), layouts.end(), [](const GroupLayout& a, const GroupLayout& b) {
    return a.group_size != b.group_size ? a.group_size < b.group_size : a.span < b.span;
  });
  return layouts;
}

CollectiveCounts collective_counts(Collective op, double nominal_bytes, int64_t n) {
  constexpr double kElement = sizeof(float);
  const auto elements = std::max<int64_t>(1, static_cast<int64_t>(nominal_bytes / kElement));
  CollectiveCounts c;
  switch (op) {
    case Collective::AllReduce:
    case Collective::SendRecv:
      c.send = c.recv = c.per_rank = elements;
      c.size_bytes = static_cast<double>(elements) * kElement;
      break;
    case Collective::AllGather:
      c.per_rank = std::max<int64_t>(1, elements / n);
      c.send = c.per_rank;
      c.recv = c.per_rank * n;
      c.size_bytes = static_cast<double>(c.recv) * kElement;
      break;
    case Collective::ReduceScatter:
      c.per_rank = std::max<int64_t>(1, elements / n);
      c.send = c.per_rank * n;
      c.recv = c.per_rank;
      c.size_bytes = static_cast<double>(c.send) * kElement;
      break;
    case Collective::AllToAll:
      c.per_rank = std::max<int64_t>(1, elements / n);
      c.send = c.recv = c.per_rank * n;
      c.size_bytes = static_cast<double>(c.send) * kElement;
      break;
  }
  return c;
}

float collective_send_value(Collective op, int r, int n, int64_t per_rank, int64_t i) {
  if (op == Collective::AllToAll)
    return static_cast<float>(r * n + i / per_rank + 1);  // block j to rank j
  return static_cast<float>(r + 1);
}

float collective_expected_value(Collective op, int r, int n, int64_t per_rank, int64_t i) {
  switch (op) {
    case Collective::AllReduce:
    case Collective::ReduceScatter:
      return static_cast<float>(n) * static_cast<float>(n + 1) / 2.0f;
    case Collective::AllGather:
      return static_cast<float>(i / per_rank + 1);
    case Collective::AllToAll:  // block j came from rank j's block r
      return static_cast<float>((i / per_rank) * n + r + 1);
    case Collective::SendRecv:
      return static_cast<float>((r - 1 + n) % n + 1);
  }
  return 0.0f;
}

}  // namespace parplan::profiler
