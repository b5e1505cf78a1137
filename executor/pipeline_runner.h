// PipelineRunner: executes one stage's action list from core/schedule.h (gpipe, 1F1B,
// interleaved) for one optimizer step: forward and backward passes of model chunks per
// micro-batch, with activations and gradients passed to the neighbouring stages.
// Deadlock freedom: every send is non-blocking (isend, completed lazily) and every receive
// waits only for data its schedule needs, which the schedules guarantee to arrive (the
// property tests/core/schedule_test.cpp checks). Waiting for the peer to post its send
// counts as pipeline_bubble, moving the data as pp_comm.
// Tested in tests/executor/plan_equivalence_test.cpp (gpipe/1f1b/interleaved equal pp=1).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/schedule.h"
#include "executor/gpt_chunk.h"
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
  void forward(const PipeAction& a, int64_t step, T* params);
  void backward(const PipeAction& a, T* params, T* grads);
  DeviceBuffer<T> receive(int peer, int tag, int64_t micro_batch);
  void send(DeviceBuffer<T> buffer, int peer, int tag, int64_t micro_batch);
  void complete_sends(bool block);
  int tag(int64_t micro_batch, int64_t virtual_stage, bool gradient) const;
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
};

}  // namespace parplan::executor
