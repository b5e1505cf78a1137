#include "executor/self_comm.h"

#include <cstdlib>
#include <cstring>

#include "core/check.h"

namespace parplan::executor {

namespace {

class SelfComm final : public Comm {
 public:
  explicit SelfComm(int world_rank) : world_rank_(world_rank) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int world_rank() const override { return world_rank_; }
  int node_local_rank() const override { return 0; }
  void all_reduce(void*, int64_t, DType, ReduceOp) override {}
  void reduce_scatter(const void* send, void* recv, int64_t count, DType type) override {
    if (send != recv) std::memmove(recv, send, count * dtype_bytes(type));
  }
  void all_gather(const void* send, void* recv, int64_t count, DType type) override {
    if (send != recv) std::memmove(recv, send, count * dtype_bytes(type));
  }
  void broadcast(void*, int64_t, DType, int) override {}
  int64_t isend(const void*, int64_t, DType, int, int) override { no_peers(); }
  int64_t irecv(void*, int64_t, DType, int, int) override { no_peers(); }
  void wait(int64_t) override { no_peers(); }
  bool test(int64_t) override { no_peers(); }
  void wait_for_message(int, int) override { no_peers(); }
  void barrier() override {}
  std::unique_ptr<Comm> split(int color, int) override {
    if (color < 0) return nullptr;
    return std::make_unique<SelfComm>(world_rank_);
  }
  [[noreturn]] void abort(int exit_code) override { std::_Exit(exit_code); }

 private:
  [[noreturn]] static void no_peers() {
    throw Error("point-to-point communication on a one-rank communicator");
  }
  int world_rank_;
};

}  // namespace

std::unique_ptr<Comm> make_self_comm(int world_rank) {
  return std::make_unique<SelfComm>(world_rank);
}

}  // namespace parplan::executor
