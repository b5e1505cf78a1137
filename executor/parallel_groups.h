// ParallelGroups: this rank's place on the plan's rank grid (core/rank_grid.h, Megatron
// order, default tp-cp-ep-dp-pp) and the communicators it needs, split from the world
// communicator: tp, pp, dp, and the tied-embedding group {first stage, last stage}. Every
// rank performs the same sequence of splits. Groups of one rank are left empty.
// Tested in tests/executor/plan_equivalence_test.cpp (orders) and comm_test.cpp.
#pragma once

#include <memory>

#include "core/parallel_plan.h"
#include "core/rank_grid.h"
#include "executor/comm.h"

namespace parplan::executor {

struct ParallelGroups {
  RankGrid grid{{}};
  int64_t rank = 0;
  int64_t tp_rank = 0;
  int64_t pp_rank = 0;
  int64_t dp_rank = 0;
  std::unique_ptr<Comm> tp;    // nullptr when tp == 1
  std::unique_ptr<Comm> pp;    // nullptr when pp == 1; rank == pipeline stage
  std::unique_ptr<Comm> dp;    // nullptr when dp == 1
  std::unique_ptr<Comm> tied;  // first and last stage with tied embeddings and pp > 1
  std::unique_ptr<Comm> kv;    // tp ranks holding the same key/value head (tp > query groups)
};

RankGrid make_rank_grid(const ParallelPlan& plan);
ParallelGroups make_parallel_groups(Comm& world, const ParallelPlan& plan, bool tied_embeddings,
                                    int64_t kv_replicas = 1);

}  // namespace parplan::executor
