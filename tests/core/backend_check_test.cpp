// core/backend_check.h: the one error every failed CUDA, cuBLAS, NCCL, CUPTI or MPI call
// raises names the library, the call, where it was made and the library's message.
#include "core/backend_check.h"

#include <gtest/gtest.h>

#include <string>

namespace parplan {
namespace {

TEST(BackendCheck, MessageNamesLibraryCallPlaceAndReason) {
  EXPECT_EQ(
      backend_error_message("NCCL", "unhandled system error", "ncclCommInitRank(&c, 2, id, 0)",
                            "executor/nccl/nccl_comm.cpp", 42),
      "NCCL call failed: ncclCommInitRank(&c, 2, id, 0) at executor/nccl/nccl_comm.cpp:42: "
      "unhandled system error");
}

TEST(BackendCheck, ThrowsParplanErrorWithTheMessage) {
  try {
    throw_backend_error("MPI", "MPI_ERR_COMM: invalid communicator", "MPI_Barrier(comm)", "f.cpp",
                        7);
    FAIL() << "throw_backend_error returned";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "MPI call failed: MPI_Barrier(comm) at f.cpp:7: MPI_ERR_COMM: invalid communicator");
  }
}

}  // namespace
}  // namespace parplan
