// StrictP2pComm: a communicator that keeps NCCL's point-to-point rules on top of another
// (MPI in the tests), so that CPU runs catch what would hang on GPUs. Its calls run in issue
// order, one group after the other (NCCL serialises one communicator's kernels); a send
// completes only when its receive runs on the peer, as NCCL's sends past its buffers do (a
// clear-to-send token on a second communicator carries that); the transfers of one
// batch_isend_irecv start together (ncclGroupStart/End). Collectives and barriers wait for
// the queued transfers first. wait() throws an Error naming the rank when a transfer has not
// completed within `timeout_s` (a deadlock under NCCL's rules), instead of hanging.
// Host memory only. Tested in tests/executor/comm_test.cpp and plan_equivalence_test.cpp (mpi).
#pragma once

#include <memory>

#include "executor/comm.h"

namespace parplan::executor {

// Collective over `inner` (it splits a second communicator); `inner` must outlive the result.
std::unique_ptr<Comm> make_strict_p2p_comm(Comm& inner, double timeout_s);

}  // namespace parplan::executor
