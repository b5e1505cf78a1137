// MpiComm (3 ranks under mpirun) and SelfComm: results of every collective, the in-place
// conventions, point-to-point with test/probe, batch_isend_irecv, and split. StrictP2pComm
// over MPI: the pipeline's transfers as the runner issued them before issue 23 deadlock under
// NCCL's rules (its timeout turns that into an error) though MPI runs them, and grouped as
// executor/p2p_plan.h groups them they complete with the right data.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

#include "core/check.h"
#include "executor/p2p_plan.h"
#include "executor/self_comm.h"
#include "executor/strict_p2p_comm.h"
#include "tests/executor/mpi_world.h"

namespace parplan::executor {
namespace {

using testing::world;

TEST(MpiComm, AllReduceSumAndMax) {
  const int r = world().rank(), n = world().size();
  std::vector<double> v = {1.0 * r, -1.0 * r, 2.5};
  world().all_reduce(v.data(), 3, DType::F64, ReduceOp::Sum);
  EXPECT_EQ(v[0], n * (n - 1) / 2.0);
  EXPECT_EQ(v[2], 2.5 * n);
  std::vector<float> m = {static_cast<float>(r), static_cast<float>(-r)};
  world().all_reduce(m.data(), 2, DType::F32, ReduceOp::Max);
  EXPECT_EQ(m[0], n - 1.0f);
  EXPECT_EQ(m[1], 0.0f);
}

TEST(MpiComm, ReduceScatterOutOfPlaceAndInPlace) {
  const int r = world().rank(), n = world().size();
  const int64_t block = 4;
  std::vector<double> send(n * block);
  for (int64_t i = 0; i < n * block; ++i) send[i] = static_cast<double>(i + 100 * r);
  auto expected = [&](int64_t j) {  // element j of this rank's block
    double s = 0;
    for (int q = 0; q < n; ++q) s += static_cast<double>(r * block + j + 100 * q);
    return s;
  };
  std::vector<double> recv(block);
  world().reduce_scatter(send.data(), recv.data(), block, DType::F64);
  for (int64_t j = 0; j < block; ++j) EXPECT_EQ(recv[j], expected(j));
  world().reduce_scatter(send.data(), send.data() + r * block, block, DType::F64);
  for (int64_t j = 0; j < block; ++j) EXPECT_EQ(send[r * block + j], expected(j));
}

TEST(MpiComm, AllGatherOutOfPlaceAndInPlace) {
  const int r = world().rank(), n = world().size();
  std::vector<int64_t> mine = {r, 10 * r};
  std::vector<int64_t> all(2 * n, -1);
  world().all_gather(mine.data(), all.data(), 2, DType::I64);
  for (int q = 0; q < n; ++q) {
    EXPECT_EQ(all[2 * q], q);
    EXPECT_EQ(all[2 * q + 1], 10 * q);
  }
  std::vector<float> buffer(2 * n, -1.0f);
  buffer[2 * r] = static_cast<float>(r);
  buffer[2 * r + 1] = 0.5f;
  world().all_gather(buffer.data() + 2 * r, buffer.data(), 2, DType::F32);
  for (int q = 0; q < n; ++q) EXPECT_EQ(buffer[2 * q], static_cast<float>(q));
}

TEST(MpiComm, RingSendReceiveWithProbeAndTest) {
  const int r = world().rank(), n = world().size();
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  std::vector<double> out(1000, r), in(1000, -1);
  const int64_t send = world().isend(out.data(), 1000, DType::F64, next, 7);
  world().wait_for_message(prev, 7);
  const int64_t recv = world().irecv(in.data(), 1000, DType::F64, prev, 7);
  world().wait(recv);
  while (!world().test(send)) {
  }
  EXPECT_EQ(in[999], prev);
}

TEST(MpiComm, SplitByParityKeepsKeyOrder) {
  const int r = world().rank();
  auto sub = world().split(r % 2, -r);  // reversed order inside each group
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->world_rank(), r);
  int64_t smallest = r;
  sub->all_reduce(&smallest, 1, DType::I64, ReduceOp::Max);  // any collective works
  EXPECT_EQ(sub->size(), (world().size() + (r % 2 == 0 ? 1 : 0)) / 2);
  auto none = world().split(r == 0 ? -1 : 0, r);
  EXPECT_EQ(none == nullptr, r == 0);
  if (none) {
    EXPECT_EQ(none->size(), world().size() - 1);
  }
  int64_t root_value = r == 1 ? 42 : 0;
  world().broadcast(&root_value, 1, DType::I64, 1);
  EXPECT_EQ(root_value, 42);
}

TEST(MpiComm, NodeLocalRankCountsTheRanksOfThisHost) {
  // Every rank of this test runs on one host: the node-local rank is the world rank, in
  // every communicator split from the world.
  EXPECT_EQ(world().node_local_rank(), world().rank());
  auto sub = world().split(world().rank() % 2, -world().rank());
  EXPECT_EQ(sub->node_local_rank(), world().rank());
  EXPECT_EQ(make_self_comm(5)->node_local_rank(), 0);
}

TEST(MpiComm, BatchIsendIrecvSendsAndReceivesInOneCall) {
  const int r = world().rank(), n = world().size();
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  std::vector<double> out(100, r), in(100, -1);
  const std::vector<P2pOp> ops = {{true, out.data(), 100, DType::F64, next, 3},
                                  {false, in.data(), 100, DType::F64, prev, 3}};
  const std::vector<int64_t> requests = world().batch_isend_irecv(ops);
  ASSERT_EQ(requests.size(), 2u);
  world().wait(requests[1]);
  world().wait(requests[0]);
  EXPECT_EQ(in[99], prev);
}

// Runs one pipeline stage's transfers as the runner does (executor/pipeline_runner.cpp): the
// groups before each action, then a wait for the action's input; every send waited at the
// end. Each message carries its identity, checked on arrival.
void replay_stage(Comm& pp, const PipelineShape& shape, P2pPairing pairing) {
  const int64_t stage = pp.rank();
  const std::vector<PipeAction> actions = stage_schedule(shape, stage);
  const std::vector<P2pGroup> groups = plan_transfers(shape, stage, pairing);
  auto code = [](const P2pMessage& m) {
    return static_cast<double>(m.micro_batch * 1000 + m.virtual_stage * 10 + (m.gradient ? 1 : 0));
  };
  std::deque<std::vector<double>> buffers;  // stable addresses
  std::map<std::tuple<int64_t, int64_t, bool>, std::pair<int64_t, std::vector<double>*>> arriving;
  std::vector<int64_t> sends;
  std::size_t next_group = 0;
  for (int64_t i = 0; i <= static_cast<int64_t>(actions.size()); ++i) {
    for (; next_group < groups.size() && groups[next_group].before_action == i; ++next_group) {
      std::vector<P2pOp> ops;
      for (const P2pMessage& m : groups[next_group].messages) {
        std::vector<double>& b = buffers.emplace_back(4096, m.send ? code(m) : -1.0);
        ops.push_back({m.send, b.data(), 4096, DType::F64, static_cast<int>(m.peer_stage), 0});
      }
      const std::vector<int64_t> requests = pp.batch_isend_irecv(ops);
      for (std::size_t k = 0; k < ops.size(); ++k) {
        const P2pMessage& m = groups[next_group].messages[k];
        if (m.send) {
          sends.push_back(requests[k]);
        } else {
          arriving[{m.micro_batch, m.virtual_stage, m.gradient}] = {
              requests[k], &buffers[buffers.size() - ops.size() + k]};
        }
      }
    }
    if (i == static_cast<int64_t>(actions.size())) break;
    if (auto in = action_input(actions[i], shape, stage)) {
      auto& [request, buffer] = arriving.at({in->micro_batch, in->virtual_stage, in->gradient});
      pp.wait(request);
      EXPECT_EQ(buffer->back(), code(*in)) << to_string(*in);
    }
  }
  for (int64_t request : sends) pp.wait(request);
}

TEST(StrictP2pComm, UnpairedPipelineTransfersDeadlockAndGroupedOnesComplete) {
  // Ranks 0 and 1 as the two stages of 1F1B with 4 micro-batches.
  auto pair = world().split(world().rank() < 2 ? 0 : -1, world().rank());
  if (pair != nullptr) {
    const PipelineShape shape{ScheduleKind::OneFOneB, 2, 1, 4};
    replay_stage(*pair, shape, P2pPairing::Unpaired);  // MPI's sends never wait: it completes
    {
      auto strict = make_strict_p2p_comm(*pair, 60);
      replay_stage(*strict, shape, P2pPairing::Paired);
      strict->barrier();
    }
    auto strict = make_strict_p2p_comm(*pair, 1.0);
    try {
      replay_stage(*strict, shape, P2pPairing::Unpaired);
      ADD_FAILURE() << "the unpaired transfers completed under NCCL's rules";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("NCCL's point-to-point rules"), std::string::npos) << what;
      EXPECT_NE(what.find("the running group: {send to " + std::to_string(1 - pair->rank())),
                std::string::npos)
          << what;
    }
  }
  world().barrier();
}

TEST(StrictP2pComm, CollectivesWaitForQueuedTransfers) {
  auto strict = make_strict_p2p_comm(world(), 60);
  const int r = strict->rank(), n = strict->size();
  std::vector<double> out(10, r), in(10, -1);
  // A ring: alone, each rank's send would wait for a receive queued behind it.
  const std::vector<P2pOp> ops = {{true, out.data(), 10, DType::F64, (r + 1) % n, 5},
                                  {false, in.data(), 10, DType::F64, (r + n - 1) % n, 5}};
  const std::vector<int64_t> requests = strict->batch_isend_irecv(ops);
  double sum = 1;
  strict->all_reduce(&sum, 1, DType::F64, ReduceOp::Sum);  // runs the queue first
  EXPECT_EQ(sum, n);
  EXPECT_TRUE(strict->test(requests[0]));
  EXPECT_TRUE(strict->test(requests[1]));
  EXPECT_EQ(in[0], (r + n - 1) % n);
  auto half = strict->split(r % 2, r);
  int64_t count = 1;
  half->all_reduce(&count, 1, DType::I64, ReduceOp::Sum);
  EXPECT_EQ(count, half->size());
}

TEST(SelfComm, CollectivesOfOneRank) {
  auto self = make_self_comm(3);
  EXPECT_EQ(self->size(), 1);
  EXPECT_EQ(self->world_rank(), 3);
  std::vector<double> a = {1, 2}, b(2);
  self->all_reduce(a.data(), 2, DType::F64, ReduceOp::Sum);
  EXPECT_EQ(a[1], 2);
  self->all_gather(a.data(), b.data(), 2, DType::F64);
  EXPECT_EQ(b, a);
  EXPECT_EQ(self->split(-1, 0), nullptr);
  EXPECT_THROW(self->isend(a.data(), 2, DType::F64, 0, 0), Error);
}

}  // namespace
}  // namespace parplan::executor
