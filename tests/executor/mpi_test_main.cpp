// main() of the executor's mpi tests: starts MPI once (through the backend registry), runs
// the GoogleTest cases on every rank, and finalises MPI. A failure on any rank makes that
// process exit non-zero, which fails the mpirun and the ctest.
#include <gtest/gtest.h>

#include "tests/executor/mpi_world.h"

namespace parplan::executor::testing {
namespace {
std::unique_ptr<Comm>& world_slot() {
  static std::unique_ptr<Comm> world;
  return world;
}
}  // namespace
Comm& world() { return *world_slot(); }
}  // namespace parplan::executor::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  parplan::executor::testing::world_slot() = parplan::executor::start_host_world();
  const int result = RUN_ALL_TESTS();
  int64_t failures = result == 0 ? 0 : 1;
  parplan::executor::testing::world().all_reduce(&failures, 1, parplan::executor::DType::I64,
                                                 parplan::executor::ReduceOp::Sum);
  parplan::executor::testing::world_slot().reset();  // MPI_Finalize
  return failures == 0 ? 0 : 1;
}
