// NcclComm: Comm over NCCL for device memory (the CUDA executor). The world communicator is
// started from a ncclUniqueId that host rank 0 broadcasts over the host communicator (MPI);
// groups come from ncclCommSplit. Collectives run on the legacy default stream, which the
// CUDA compute backend also uses, so they are ordered with the kernels around them;
// point-to-point sends and receives run on two side streams so that a pending send never
// blocks a receive. Plain C++ header. Needs several GPUs to be exercised (two ranks may not
// share one GPU); tested on GPU machines through `parplan run --backend cuda`.
#pragma once

#include <memory>

#include "executor/comm.h"

namespace parplan::executor {

// Collective over `host`; uses the CUDA device the compute backend selected.
std::unique_ptr<Comm> make_nccl_world(Comm& host);

}  // namespace parplan::executor
