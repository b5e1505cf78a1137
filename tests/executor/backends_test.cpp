// executor/backends: which backend a build can run on how many ranks.
#include "executor/backends.h"

#include <gtest/gtest.h>

#include <string>

namespace parplan::executor {
namespace {

TEST(Backends, CudaStartsWithoutMpiForOneRank) {
  const BuildFeatures no_mpi{true, true, false};
  EXPECT_EQ(backend_missing(Backend::Cuda, no_mpi, 1), "");
  const std::string two = backend_missing(Backend::Cuda, no_mpi, 2);
  EXPECT_NE(two.find("needs MPI to start NCCL on 2 ranks"), std::string::npos) << two;
  EXPECT_EQ(backend_missing(Backend::Cuda, {true, true, true}, 8), "");
  EXPECT_NE(backend_missing(Backend::Cuda, {false, false, true}, 1).find("without CUDA"),
            std::string::npos);
  EXPECT_NE(backend_missing(Backend::Cuda, {true, false, true}, 1).find("without NCCL"),
            std::string::npos);
  EXPECT_EQ(backend_missing(Backend::Cpu, {}, 4), "");
}

TEST(Backends, AvailabilityFollowsThisBuild) {
  std::string why_not = "unset";
  EXPECT_TRUE(backend_available(Backend::Cpu, 2, &why_not));
  EXPECT_EQ(why_not, "");
  const BuildFeatures built = build_features();
  EXPECT_EQ(backend_available(Backend::Cuda, 1, &why_not), built.cuda && built.nccl);
  EXPECT_EQ(why_not, backend_missing(Backend::Cuda, built, 1));
  EXPECT_EQ(built.mpi, built_with_mpi());
}

}  // namespace
}  // namespace parplan::executor
