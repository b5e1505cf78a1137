#include "executor/parallel_groups.h"

#include "core/check.h"

namespace parplan::executor {

RankGrid make_rank_grid(const ParallelPlan& plan) {
  return RankGrid::from_order(
      plan.order,
      {{"tp", plan.tp}, {"cp", plan.cp}, {"ep", plan.ep}, {"dp", plan.dp}, {"pp", plan.pp}});
}

namespace {
// Splits `world` into the groups over `dim`; keeps the communicator only when it has more
// than one rank. The color is the group's lowest rank, the key the coordinate on `dim`.
std::unique_ptr<Comm> split_dim(Comm& world, const RankGrid& grid, int64_t rank, const char* dim) {
  const auto group = grid.group_of(rank, {dim});
  auto comm = world.split(static_cast<int>(group.front()), static_cast<int>(grid.coord(rank, dim)));
  PARPLAN_ASSERT(comm != nullptr && comm->size() == static_cast<int>(group.size()));
  if (comm->size() == 1) return nullptr;
  return comm;
}
}  // namespace

ParallelGroups make_parallel_groups(Comm& world, const ParallelPlan& plan, bool tied_embeddings,
                                    int64_t kv_replicas) {
  ParallelGroups g;
  g.grid = make_rank_grid(plan);
  PARPLAN_CHECK(g.grid.world_size() == world.size(), "the plan needs ", g.grid.world_size(),
                " ranks but the communicator has ", world.size());
  g.rank = world.rank();
  g.tp_rank = g.grid.coord(g.rank, "tp");
  g.pp_rank = g.grid.coord(g.rank, "pp");
  g.dp_rank = g.grid.coord(g.rank, "dp");
  g.tp = split_dim(world, g.grid, g.rank, "tp");
  g.pp = split_dim(world, g.grid, g.rank, "pp");
  g.dp = split_dim(world, g.grid, g.rank, "dp");
  const bool end_stage = g.pp_rank == 0 || g.pp_rank == plan.pp - 1;
  const bool tied_group = tied_embeddings && plan.pp > 1 && end_stage;
  const int color = tied_group ? static_cast<int>(g.grid.group_of(g.rank, {"pp"}).front()) : -1;
  g.tied = world.split(color, static_cast<int>(g.pp_rank));
  if (kv_replicas > 1) {
    g.kv = g.tp->split(static_cast<int>(g.tp_rank / kv_replicas), static_cast<int>(g.tp_rank));
  }
  return g;
}

}  // namespace parplan::executor
