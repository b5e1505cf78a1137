// SelfComm: the communicator of a single rank, for runs without MPI and for in-process
// reference runs in tests. Collectives copy or do nothing; point-to-point is an error (a
// one-rank plan has no pipeline peers). Host memory only. Tested in comm_test.cpp.
#pragma once

#include <memory>

#include "executor/comm.h"

namespace parplan::executor {

std::unique_ptr<Comm> make_self_comm(int world_rank = 0);

}  // namespace parplan::executor
