#include "executor/mpi/mpi_comm.h"

#include <mpi.h>

#include <climits>
#include <cstring>
#include <string>
#include <unordered_map>

#include "core/check.h"
#include "core/leak_check_pause.h"
#include "core/mpi/mpi_check.h"

namespace parplan::executor {

namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::F32:
      return MPI_FLOAT;
    case DType::F64:
      return MPI_DOUBLE;
    case DType::I32:
      return MPI_INT32_T;
    case DType::I64:
      return MPI_INT64_T;
    case DType::U8:
      break;
  }
  return MPI_UINT8_T;
}

class MpiComm final : public Comm {
 public:
  MpiComm(MPI_Comm comm, int world_rank, bool finalize_on_destroy)
      : comm_(comm), world_rank_(world_rank), finalize_(finalize_on_destroy) {
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  ~MpiComm() override {
    if (comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalize_ && !finalized) {
      const LeakCheckPause pause;  // Open MPI's state lives until exit
      MPI_Finalize();
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int world_rank() const override { return world_rank_; }

  void all_reduce(void* data, int64_t count, DType type, ReduceOp op) override {
    check(MPI_Allreduce(MPI_IN_PLACE, data, to_int(count), mpi_type(type),
                        op == ReduceOp::Sum ? MPI_SUM : MPI_MAX, comm_),
          "MPI_Allreduce");
  }

  void reduce_scatter(const void* send, void* recv, int64_t count, DType type) override {
    const std::size_t block = static_cast<std::size_t>(count) * dtype_bytes(type);
    auto* base = static_cast<char*>(const_cast<void*>(send));
    if (recv == base + rank_ * block) {
      // MPI's in-place form leaves the result at the start of the buffer.
      check(MPI_Reduce_scatter_block(MPI_IN_PLACE, base, to_int(count), mpi_type(type), MPI_SUM,
                                     comm_),
            "MPI_Reduce_scatter_block");
      if (rank_ != 0) std::memmove(recv, base, block);
      return;
    }
    check(MPI_Reduce_scatter_block(send, recv, to_int(count), mpi_type(type), MPI_SUM, comm_),
          "MPI_Reduce_scatter_block");
  }

  void all_gather(const void* send, void* recv, int64_t count, DType type) override {
    const std::size_t block = static_cast<std::size_t>(count) * dtype_bytes(type);
    const bool in_place = send == static_cast<char*>(recv) + rank_ * block;
    check(MPI_Allgather(in_place ? MPI_IN_PLACE : send, to_int(count), mpi_type(type), recv,
                        to_int(count), mpi_type(type), comm_),
          "MPI_Allgather");
  }

  void broadcast(void* data, int64_t count, DType type, int root) override {
    check(MPI_Bcast(data, to_int(count), mpi_type(type), root, comm_), "MPI_Bcast");
  }

  int64_t isend(const void* data, int64_t count, DType type, int peer, int tag) override {
    MPI_Request request;
    check(MPI_Isend(data, to_int(count), mpi_type(type), peer, tag, comm_, &request), "MPI_Isend");
    return keep(request);
  }
  int64_t irecv(void* data, int64_t count, DType type, int peer, int tag) override {
    MPI_Request request;
    check(MPI_Irecv(data, to_int(count), mpi_type(type), peer, tag, comm_, &request), "MPI_Irecv");
    return keep(request);
  }
  void wait(int64_t id) override {
    MPI_Request request = take(id);
    check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  bool test(int64_t id) override {
    auto it = requests_.find(id);
    PARPLAN_ASSERT(it != requests_.end());
    int done = 0;
    check(MPI_Test(&it->second, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) requests_.erase(it);
    return done != 0;
  }
  void wait_for_message(int peer, int tag) override {
    check(MPI_Probe(peer, tag, comm_, MPI_STATUS_IGNORE), "MPI_Probe");
  }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

  std::unique_ptr<Comm> split(int color, int key) override {
    MPI_Comm out = MPI_COMM_NULL;
    check(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
    if (out == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiComm>(out, world_rank_, false);
  }

  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
  }

 private:
  void check(int code, const char* call) const {
    if (code == MPI_SUCCESS) return;
    throw Error("rank " + std::to_string(world_rank_) + ": " + call +
                " failed: " + mpi_error_string(code));
  }
  int to_int(int64_t count) const {
    if (count > INT_MAX) {
      throw Error("rank " + std::to_string(world_rank_) + ": a message of " +
                  std::to_string(count) + " elements exceeds MPI's int count");
    }
    return static_cast<int>(count);
  }
  int64_t keep(MPI_Request request) {
    requests_.emplace(next_request_, request);
    return next_request_++;
  }
  MPI_Request take(int64_t id) {
    auto it = requests_.find(id);
    PARPLAN_ASSERT(it != requests_.end());
    MPI_Request request = it->second;
    requests_.erase(it);
    return request;
  }

  MPI_Comm comm_;
  int world_rank_;
  bool finalize_;
  int rank_ = 0;
  int size_ = 1;
  std::unordered_map<int64_t, MPI_Request> requests_;
  int64_t next_request_ = 1;
};

}  // namespace

std::unique_ptr<Comm> make_mpi_world() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // The watchdog thread never calls MPI; the main thread does all communication.
    const LeakCheckPause pause;  // Open MPI's start-up state lives until exit
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return std::make_unique<MpiComm>(MPI_COMM_WORLD, rank, !initialized);
}

}  // namespace parplan::executor
