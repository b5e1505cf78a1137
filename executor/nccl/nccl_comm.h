// NcclComm: Comm over NCCL for device memory (the CUDA executor). The world communicator is
// started from a ncclUniqueId that host rank 0 broadcasts over the host communicator (MPI);
// groups come from ncclCommSplit. Collectives run on the legacy default stream, which the
// CUDA compute backend also uses, so they are ordered with the kernels around them;
// point-to-point transfers run on side streams. NCCL runs one communicator's calls in issue
// order and a send past its buffers completes only when its receive runs, so transfers that
// two ranks issue in crossed order must start in one batch_isend_irecv (ncclGroupStart/End),
// as the pipeline runner's groups do (executor/p2p_plan.h; StrictP2pComm checks them on CPU).
// Plain C++ header. Needs several GPUs to be exercised (two ranks may not
// share one GPU); tested on GPU machines through `parplan run --backend cuda`.
#pragma once

#include <memory>

#include "executor/comm.h"

namespace parplan::executor {

// Collective over `host`; uses the CUDA device the compute backend selected.
std::unique_ptr<Comm> make_nccl_world(Comm& host);

}  // namespace parplan::executor
