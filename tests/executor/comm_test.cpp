// MpiComm (3 ranks under mpirun) and SelfComm: results of every collective, the in-place
// conventions, point-to-point with test/probe, and split.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/check.h"
#include "executor/self_comm.h"
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
