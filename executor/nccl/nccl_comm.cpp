#include "executor/nccl/nccl_comm.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/check.h"

namespace parplan::executor {

namespace {

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::F32:
      return ncclFloat32;
    case DType::F64:
      return ncclFloat64;
    case DType::I32:
      return ncclInt32;
    case DType::I64:
      return ncclInt64;
    case DType::U8:
      break;
  }
  return ncclUint8;
}

class NcclComm final : public Comm {
 public:
  NcclComm(ncclComm_t comm, int world_rank, int node_local_rank)
      : comm_(comm), world_rank_(world_rank), node_local_rank_(node_local_rank) {
    check(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank");
    check(ncclCommCount(comm_, &size_), "ncclCommCount");
    cuda(cudaStreamCreateWithFlags(&send_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda(cudaStreamCreateWithFlags(&recv_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda(cudaMalloc(&barrier_word_, sizeof(float)), "cudaMalloc");
  }
  ~NcclComm() override {
    for (auto& [id, event] : requests_) cudaEventDestroy(event);
    cudaFree(barrier_word_);
    cudaStreamDestroy(send_stream_);
    cudaStreamDestroy(recv_stream_);
    ncclCommDestroy(comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int world_rank() const override { return world_rank_; }
  int node_local_rank() const override { return node_local_rank_; }

  void all_reduce(void* data, int64_t count, DType type, ReduceOp op) override {
    check(ncclAllReduce(data, data, static_cast<size_t>(count), nccl_type(type),
                        op == ReduceOp::Sum ? ncclSum : ncclMax, comm_, 0),
          "ncclAllReduce");
  }
  void reduce_scatter(const void* send, void* recv, int64_t count, DType type) override {
    check(ncclReduceScatter(send, recv, static_cast<size_t>(count), nccl_type(type), ncclSum, comm_,
                            0),
          "ncclReduceScatter");
  }
  void all_gather(const void* send, void* recv, int64_t count, DType type) override {
    check(ncclAllGather(send, recv, static_cast<size_t>(count), nccl_type(type), comm_, 0),
          "ncclAllGather");
  }
  void broadcast(void* data, int64_t count, DType type, int root) override {
    check(ncclBroadcast(data, data, static_cast<size_t>(count), nccl_type(type), root, comm_, 0),
          "ncclBroadcast");
  }

  int64_t isend(const void* data, int64_t count, DType type, int peer, int) override {
    after_default_stream(send_stream_);
    check(ncclSend(data, static_cast<size_t>(count), nccl_type(type), peer, comm_, send_stream_),
          "ncclSend");
    return record(send_stream_);
  }
  int64_t irecv(void* data, int64_t count, DType type, int peer, int) override {
    after_default_stream(recv_stream_);
    check(ncclRecv(data, static_cast<size_t>(count), nccl_type(type), peer, comm_, recv_stream_),
          "ncclRecv");
    return record(recv_stream_);
  }
  // One NCCL group on the send stream: its transfers progress together, so a send never
  // waits for a receive that this rank would issue after it.
  std::vector<int64_t> batch_isend_irecv(std::span<const P2pOp> ops) override {
    after_default_stream(send_stream_);
    check(ncclGroupStart(), "ncclGroupStart");
    for (const P2pOp& op : ops) {
      const auto count = static_cast<size_t>(op.count);
      const ncclResult_t r =
          op.send ? ncclSend(op.data, count, nccl_type(op.type), op.peer, comm_, send_stream_)
                  : ncclRecv(op.data, count, nccl_type(op.type), op.peer, comm_, send_stream_);
      if (r != ncclSuccess) {
        ncclGroupEnd();
        check(r, op.send ? "ncclSend" : "ncclRecv");
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
    std::vector<int64_t> requests;
    for (std::size_t i = 0; i < ops.size(); ++i) requests.push_back(record(send_stream_));
    return requests;
  }
  void wait(int64_t request) override {
    while (!test(request)) std::this_thread::yield();
  }
  bool test(int64_t request) override {
    auto it = requests_.find(request);
    PARPLAN_ASSERT(it != requests_.end());
    const cudaError_t state = cudaEventQuery(it->second);
    if (state == cudaErrorNotReady) {
      ncclResult_t async = ncclSuccess;
      check(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError");
      check(async, "an asynchronous NCCL operation");
      return false;
    }
    cuda(state, "cudaEventQuery");
    // Later work on the default stream (and freeing the buffer) comes after the transfer.
    cuda(cudaStreamWaitEvent(0, it->second, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(it->second);
    requests_.erase(it);
    return true;
  }
  void wait_for_message(int, int) override {}

  void barrier() override {
    check(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclFloat32, ncclSum, comm_, 0),
          "ncclAllReduce (barrier)");
    cuda(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  }

  std::unique_ptr<Comm> split(int color, int key) override {
    ncclComm_t out = nullptr;
    check(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &out, nullptr),
          "ncclCommSplit");
    if (color < 0 || out == nullptr) return nullptr;
    return std::make_unique<NcclComm>(out, world_rank_, node_local_rank_);
  }

  [[noreturn]] void abort(int exit_code) override {
    ncclCommAbort(comm_);
    std::_Exit(exit_code);
  }

 private:
  void check(ncclResult_t r, const char* call) const {
    if (r == ncclSuccess) return;
    throw Error("rank " + std::to_string(world_rank_) + ": " + call +
                " failed: " + ncclGetErrorString(r) + " (" + ncclGetLastError(comm_) + ")");
  }
  void cuda(cudaError_t r, const char* call) const {
    if (r == cudaSuccess) return;
    throw Error("rank " + std::to_string(world_rank_) + ": " + call +
                " failed: " + cudaGetErrorString(r));
  }
  void after_default_stream(cudaStream_t stream) {
    cudaEvent_t ready;
    cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
    cuda(cudaEventRecord(ready, 0), "cudaEventRecord");
    cuda(cudaStreamWaitEvent(stream, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);
  }
  int64_t record(cudaStream_t stream) {
    cudaEvent_t done;
    cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
    cuda(cudaEventRecord(done, stream), "cudaEventRecord");
    requests_.emplace(next_request_, done);
    return next_request_++;
  }

  ncclComm_t comm_;
  int world_rank_;
  int node_local_rank_;
  int rank_ = 0;
  int size_ = 1;
  cudaStream_t send_stream_ = nullptr;
  cudaStream_t recv_stream_ = nullptr;
  float* barrier_word_ = nullptr;
  std::unordered_map<int64_t, cudaEvent_t> requests_;
  int64_t next_request_ = 1;
};

}  // namespace

std::unique_ptr<Comm> make_nccl_world(Comm& host) {
  ncclUniqueId id;
  if (host.rank() == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    PARPLAN_CHECK(r == ncclSuccess, "rank 0: ncclGetUniqueId failed: ", ncclGetErrorString(r));
  }
  host.broadcast(&id, sizeof(id), DType::U8, 0);
  ncclComm_t comm = nullptr;
  const ncclResult_t r = ncclCommInitRank(&comm, host.size(), id, host.rank());
  PARPLAN_CHECK(r == ncclSuccess, "rank ", host.world_rank(),
                ": ncclCommInitRank failed: ", ncclGetErrorString(r),
                " (two ranks cannot share one GPU; run one rank per GPU)");
  return std::make_unique<NcclComm>(comm, host.world_rank(), host.node_local_rank());
}

}  // namespace parplan::executor
