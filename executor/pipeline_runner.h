// PipelineRunner: executes one stage's action list from core/schedule.h (gpipe, 1F1B,
// interleaved) for one optimizer step: forward and backward passes of model chunks per
// micro-batch, with activations and gradients passed to the neighbouring stages.
// Transfers follow executor/p2p_plan.h: an action's input starts in one group
// (Comm::batch_isend_irecv) with the previous action's output when that is ready, as
// Megatron pairs them, so the schedules keep to NCCL's rules (a send completes only when its
// receive runs; one communicator's calls run in order). Sends complete lazily; every
// receive waits only for data its schedule needs, which the schedules guarantee to arrive
// (tests/core/schedule_test.cpp). Waiting for the peer to post its send counts as
// pipeline_bubble, moving the data as pp_comm.
// Tested in tests/executor/plan_equivalence_test.cpp (gpipe/1f1b/interleaved equal pp=1, also
// under StrictP2pComm's NCCL rules) and tests/executor/p2p_plan_test.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "core/schedule.h"
#include "executor/gpt_chunk.h"
#include "executor/p2p_plan.h"
#include "executor/parallel_groups.h"

namespace parplan::executor {

struct MicroBatchPlan {
  int64_t num_micro_batches = 1;  // per data-parallel rank
  int64_t global_batch_size = 1;
  uint64_t seed = 0;
};

template <typename T>
class PipelineRunner {
 public:
  PipelineRunner(StepContext<T>& ctx, const ParameterBufferLayout& layout, const ParallelPlan& plan,
                 const ParallelGroups& groups, const MicroBatchPlan& batches);

  // Runs every action of this stage for optimizer step `step`; gradients add into `grads`.
  // Returns the sum of the token losses this rank computed (last virtual stage only).
  double run(int64_t step, T* params, T* grads);

 private:
  using MessageKey = std::tuple<int64_t, int64_t, bool>;  // micro-batch, virtual stage, gradient
  struct Arriving {
    int64_t request;
    DeviceBuffer<T> buffer;
  };

  // Return the output to send (empty when none).
  DeviceBuffer<T> forward(const PipeAction& a, int64_t step, T* params, DeviceBuffer<T> input);
  DeviceBuffer<T> backward(const PipeAction& a, T* params, T* grads, DeviceBuffer<T> dout);
  // Starts one group: its sends from outputs_, its receives into new buffers in arriving_.
  void start_group(const P2pGroup& group, int64_t micro_batch);
  // The input `m` once arrived.
  DeviceBuffer<T> take_input(const P2pMessage& m);
  void complete_sends(bool block);
  int tag(const P2pMessage& m) const;
  void load_tokens(ChunkActivations<T>& acts, int64_t step, int64_t micro_batch, bool tokens,
                   bool targets);

  StepContext<T>& ctx_;
  const ParameterBufferLayout& layout_;
  const ParallelPlan& plan_;
  const ParallelGroups& groups_;
  MicroBatchPlan batches_;
  int64_t num_virtual_ = 1;
  double loss_sum_ = 0;
  std::map<std::pair<int64_t, int64_t>, ChunkActivations<T>> live_;  // (micro-batch, chunk)
  std::vector<std::pair<int64_t, DeviceBuffer<T>>> sends_;           // (request, buffer)
  std::map<MessageKey, DeviceBuffer<T>> outputs_;                    // computed, not yet sent
  std::map<MessageKey, Arriving> arriving_;                          // receives started
};

}  // namespace parplan::executor
