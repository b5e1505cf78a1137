// Trainer: one rank's share of GPT training under a parallel plan. Owns the contiguous
// parameter and gradient buffers (ParameterBufferLayout), the AdamW moments (fp32 or fp64 "master"
// state; sharded over dp under ZeRO-1), and runs an optimizer step:
//   zero gradients -> pipeline schedule (PipelineRunner) -> gradient synchronisation
//   (tp all-reduce of replicated tensors under sequence parallelism, tied-embedding
//   all-reduce between first and last stage, dp all-reduce or ZeRO-1 reduce-scatter) ->
//   AdamW on this rank's range -> ZeRO-1 all-gather of the parameters.
// Tested in tests/executor/model_gradient_test.cpp (finite differences) and
// plan_equivalence_test.cpp (every plan equals one rank).
#pragma once

#include <memory>
#include <vector>

#include "core/job.h"
#include "executor/compute.h"
#include "executor/parallel_groups.h"
#include "executor/pipeline_runner.h"
#include "executor/step_context.h"

namespace parplan::executor {

// This rank's contributions to the step's figures; summed over all ranks they give the mean
// loss and the squared global gradient norm (each parameter counted once).
struct StepResult {
  double loss = 0;
  double grad_norm_sq = 0;
};

struct TrainerOptions {
  uint64_t seed = 1234;
  AdamWConfig adamw;
};

template <typename T>
class Trainer {
 public:
  // `world` is a communicator of the backend's memory kind with plan.num_gpus() ranks.
  Trainer(const Job& job, const TrainerOptions& options, Comm& world, Compute<T>& compute,
          PhaseTimer& timer);

  // One optimizer step (0-based index). The loss part is non-zero on the last pipeline
  // stage's tp rank 0 only.
  StepResult step(int64_t step_index);

  // The parts of step(), for tests: gradients of the mean loss (synchronised, not sharded:
  // call only with zero_stage 0), then the update.
  double forward_backward(int64_t step_index);
  void optimizer_step(int64_t step_index);
  // Squared norm of the synchronised gradients this rank owns (replicas and the tied copy
  // excluded), as Megatron's clip_grad_norm counts them.
  double local_grad_norm_sq();

  const ParameterBufferLayout& layout() const { return layout_; }
  const ParallelGroups& groups() const { return groups_; }
  MemoryTracker& memory() { return memory_; }
  const GemmStats& gemm_stats() const { return ctx_.gemm; }
  std::vector<T> params_host() const;
  std::vector<T> grads_host() const;
  void set_params_host(const std::vector<T>& values);

 private:
  struct Segment {
    int64_t begin, end;
    bool decay;
  };
  double run_pipeline(int64_t step_index);
  void synchronize_gradients();

  const Job& job_;
  TrainerOptions options_;
  Compute<T>& compute_;
  PhaseTimer& timer_;
  ParallelGroups groups_;
  ParameterBufferLayout layout_;
  MemoryTracker memory_;
  DeviceBuffer<T> params_;
  DeviceBuffer<T> grads_;
  DeviceBuffer<T> adam_m_;
  DeviceBuffer<T> adam_v_;
  int64_t shard_begin_ = 0;  // this rank's optimizer range
  int64_t shard_size_ = 0;
  std::vector<Segment> segments_;  // weight-decay runs of the buffer
  StepContext<T> ctx_;
  std::unique_ptr<PipelineRunner<T>> runner_;
};

}  // namespace parplan::executor
