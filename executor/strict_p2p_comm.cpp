#include "executor/strict_p2p_comm.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "core/check.h"

namespace parplan::executor {

namespace {

using Clock = std::chrono::steady_clock;

// One transfer of a queued group. Its receive side sends a clear-to-send token when its group
// starts running; its send side moves the data only after that token has come.
struct Transfer {
  P2pOp op;
  int64_t id = 0;
  int64_t token_request = 0;  // the token's send (receive side) or receive (send side)
  int64_t data_request = 0;
  uint8_t token = 0;
  bool done = false;
};

class StrictP2pComm final : public Comm {
 public:
  StrictP2pComm(Comm& inner, std::unique_ptr<Comm> owned, double timeout_s)
      : owned_(std::move(owned)),
        inner_(inner),
        control_(inner.split(0, inner.rank())),
        timeout_s_(timeout_s) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  int world_rank() const override { return inner_.world_rank(); }
  int node_local_rank() const override { return inner_.node_local_rank(); }

  void all_reduce(void* data, int64_t count, DType type, ReduceOp op) override {
    drain("all_reduce");
    inner_.all_reduce(data, count, type, op);
  }
  void reduce_scatter(const void* send, void* recv, int64_t count, DType type) override {
    drain("reduce_scatter");
    inner_.reduce_scatter(send, recv, count, type);
  }
  void all_gather(const void* send, void* recv, int64_t count, DType type) override {
    drain("all_gather");
    inner_.all_gather(send, recv, count, type);
  }
  void broadcast(void* data, int64_t count, DType type, int root) override {
    drain("broadcast");
    inner_.broadcast(data, count, type, root);
  }

  int64_t isend(const void* data, int64_t count, DType type, int peer, int tag) override {
    const P2pOp op{true, const_cast<void*>(data), count, type, peer, tag};
    return batch_isend_irecv(std::span<const P2pOp>(&op, 1)).front();
  }
  int64_t irecv(void* data, int64_t count, DType type, int peer, int tag) override {
    const P2pOp op{false, data, count, type, peer, tag};
    return batch_isend_irecv(std::span<const P2pOp>(&op, 1)).front();
  }
  std::vector<int64_t> batch_isend_irecv(std::span<const P2pOp> ops) override {
    std::vector<int64_t> ids;
    auto& group = queue_.emplace_back();
    for (const P2pOp& op : ops) {
      group.push_back(std::make_unique<Transfer>());
      group.back()->op = op;
      group.back()->id = next_id_++;
      ids.push_back(group.back()->id);
    }
    progress();
    return ids;
  }
  void wait(int64_t request) override {
    const auto start = Clock::now();
    while (!test(request)) {
      if (seconds_since(start) > timeout_s_) stuck("a transfer");
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  bool test(int64_t request) override {
    progress();
    return finished_.erase(request) > 0;
  }
  // NCCL cannot tell whether a peer has sent.
  void wait_for_message(int, int) override {}

  void barrier() override {
    drain("barrier");
    inner_.barrier();
  }
  std::unique_ptr<Comm> split(int color, int key) override {
    drain("split");
    std::unique_ptr<Comm> part = inner_.split(color, key);
    if (part == nullptr) return nullptr;
    Comm& ref = *part;
    return std::make_unique<StrictP2pComm>(ref, std::move(part), timeout_s_);
  }
  [[noreturn]] void abort(int exit_code) override {
    inner_.abort(exit_code);
    std::_Exit(exit_code);
  }

 private:
  using Group = std::vector<std::unique_ptr<Transfer>>;

  static double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  [[noreturn]] void stuck(const std::string& what) const {
    std::string running;
    if (!queue_.empty()) {
      for (const auto& t : queue_.front()) {
        running += std::string(running.empty() ? "" : ", ") +
                   (t->op.send ? "send to " : "recv from ") + std::to_string(t->op.peer) + " tag " +
                   std::to_string(t->op.tag);
      }
    }
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeout_s_);
    throw Error(
        "rank " + std::to_string(world_rank()) + ": " + what + " waited more than " + seconds +
        " s under NCCL's point-to-point rules (a deadlock on GPUs); the running group: {" +
        running + "}, " + std::to_string(queue_.empty() ? 0 : queue_.size() - 1) + " more queued");
  }

  void start(Group& group) {
    for (auto& t : group) {
      if (t->op.send) {
        t->token_request = control_->irecv(&t->token, 1, DType::U8, t->op.peer, t->op.tag);
      } else {
        t->token_request = control_->isend(&t->token, 1, DType::U8, t->op.peer, t->op.tag);
        t->data_request = inner_.irecv(t->op.data, t->op.count, t->op.type, t->op.peer, t->op.tag);
      }
    }
  }

  bool advance(Transfer& t) {
    if (t.token_request != 0 && control_->test(t.token_request)) {
      t.token_request = 0;
      if (t.op.send) {
        t.data_request = inner_.isend(t.op.data, t.op.count, t.op.type, t.op.peer, t.op.tag);
      }
    }
    if (t.data_request != 0 && inner_.test(t.data_request)) t.data_request = 0;
    t.done = t.token_request == 0 && t.data_request == 0;
    return t.done;
  }

  // Runs the queue's groups in order as far as the peers allow.
  void progress() {
    while (!queue_.empty()) {
      Group& group = queue_.front();
      if (!started_) {
        start(group);
        started_ = true;
      }
      bool complete = true;
      for (auto& t : group) complete = (t->done || advance(*t)) && complete;
      if (!complete) return;
      for (auto& t : group) finished_.insert(t->id);
      queue_.pop_front();
      started_ = false;
    }
  }

  void drain(const char* call) {
    const auto start = Clock::now();
    for (progress(); !queue_.empty(); progress()) {
      if (seconds_since(start) > timeout_s_) stuck(std::string("the transfers before ") + call);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  std::unique_ptr<Comm> owned_;
  Comm& inner_;
  std::unique_ptr<Comm> control_;
  double timeout_s_;
  std::deque<Group> queue_;
  bool started_ = false;
  std::set<int64_t> finished_;
  int64_t next_id_ = 1;
};

}  // namespace

std::unique_ptr<Comm> make_strict_p2p_comm(Comm& inner, double timeout_s) {
  return std::make_unique<StrictP2pComm>(inner, nullptr, timeout_s);
}

}  // namespace parplan::executor
