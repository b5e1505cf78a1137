// Comm: one of the executor's two plug points (the other is Compute). A communicator over a
// group of ranks, with the collectives Megatron-style training needs. Implemented by MpiComm
// (executor/mpi/, host memory, MPI_Comm_split per group), NcclComm (executor/nccl/, device
// memory, ncclCommSplit), SelfComm (one rank, no library) and StrictP2pComm (NCCL's
// point-to-point rules over another communicator, for CPU tests). Buffers are in the memory of
// the backend the communicator belongs to. Calls return when the data may be used, except
// isend/irecv, which return a request for wait(). Errors throw parplan::Error naming the
// rank. Tested in tests/executor/comm_test.cpp (mpi) and through every plan-equivalence test.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "executor/dtype.h"

namespace parplan::executor {

// One transfer of a batch_isend_irecv group.
struct P2pOp {
  bool send = true;  // else a receive into `data`
  void* data = nullptr;
  int64_t count = 0;
  DType type = DType::F32;
  int peer = 0;
  int tag = 0;
};

class Comm {
 public:
  virtual ~Comm() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The rank in the world communicator this one was split from (for messages).
  virtual int world_rank() const = 0;
  // This process's index among the job's processes on its host (MPI_Comm_split_type
  // MPI_COMM_TYPE_SHARED, ordered by world rank); picks its GPU (core/gpu_assignment.h).
  virtual int node_local_rank() const = 0;

  // In place: every rank ends with op over all ranks' `count` elements.
  virtual void all_reduce(void* data, int64_t count, DType type, ReduceOp op) = 0;
  // `send` holds size() * recv_count elements; rank r receives the sum of block r. In place
  // when recv == send + rank() * recv_count (the NCCL convention).
  virtual void reduce_scatter(const void* send, void* recv, int64_t recv_count, DType type) = 0;
  // `recv` gets size() blocks of send_count elements in rank order. In place when
  // send == recv + rank() * send_count.
  virtual void all_gather(const void* send, void* recv, int64_t send_count, DType type) = 0;
  virtual void broadcast(void* data, int64_t count, DType type, int root) = 0;

  // Point to point. `tag` distinguishes messages between one pair (NCCL ignores it and
  // matches in issue order, which the pipeline keeps identical on both sides).
  virtual int64_t isend(const void* data, int64_t count, DType type, int peer, int tag) = 0;
  virtual int64_t irecv(void* data, int64_t count, DType type, int peer, int tag) = 0;
  virtual void wait(int64_t request) = 0;
  // True (and the request is finished) when it has completed; never blocks.
  virtual bool test(int64_t request) = 0;
  // Blocks until `peer` has posted the send matching `tag` (MPI_Probe); separates waiting for
  // a pipeline peer from moving the data. A no-op where the library cannot tell.
  virtual void wait_for_message(int peer, int tag) = 0;
  // Starts `ops` together and returns one request per op, in order (Megatron's
  // batch_isend_irecv). NCCL runs one communicator's calls in issue order and a send there
  // completes only when its receive runs, so a send and a receive that two ranks issue in
  // crossed order deadlock unless they start in one group (ncclGroupStart/End). This default
  // (MPI, where a send never waits for later calls): the sends as isend, then each receive as
  // wait_for_message and irecv, so the call may block until the receives' peers have sent.
  virtual std::vector<int64_t> batch_isend_irecv(std::span<const P2pOp> ops) {
    std::vector<int64_t> requests(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const P2pOp& op = ops[i];
      if (op.send) requests[i] = isend(op.data, op.count, op.type, op.peer, op.tag);
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const P2pOp& op = ops[i];
      if (op.send) continue;
      wait_for_message(op.peer, op.tag);
      requests[i] = irecv(op.data, op.count, op.type, op.peer, op.tag);
    }
    return requests;
  }

  virtual void barrier() = 0;
  // Collective over this communicator: ranks with equal color form a new communicator,
  // ordered by key. color < 0: this rank joins none and gets nullptr.
  virtual std::unique_ptr<Comm> split(int color, int key) = 0;
  // Ends every process of the job (MPI_Abort); used after a rank-local failure.
  [[noreturn]] virtual void abort(int exit_code) = 0;
};

}  // namespace parplan::executor
