#include "executor/pipeline_runner.h"

#include "core/check.h"
#include "executor/deterministic_random.h"

namespace parplan::executor {

template <typename T>
PipelineRunner<T>::PipelineRunner(StepContext<T>& ctx, const ParameterBufferLayout& layout,
                                  const ParallelPlan& plan, const ParallelGroups& groups,
                                  const MicroBatchPlan& batches)
    : ctx_(ctx),
      layout_(layout),
      plan_(plan),
      groups_(groups),
      batches_(batches),
      num_virtual_(plan.pp * plan.vpp) {}

template <typename T>
int PipelineRunner<T>::tag(int64_t micro_batch, int64_t virtual_stage, bool gradient) const {
  // MPI guarantees tags up to 32767; messages with equal tags are never in flight together.
  return static_cast<int>(((micro_batch * num_virtual_ + virtual_stage) * 2 + (gradient ? 1 : 0)) %
                          32767);
}

template <typename T>
void PipelineRunner<T>::load_tokens(ChunkActivations<T>& acts, int64_t step, int64_t micro_batch,
                                    bool tokens, bool targets) {
  const int64_t mbs = ctx_.batch;
  const int64_t first_sample = step * batches_.global_batch_size +
                               (groups_.dp_rank * batches_.num_micro_batches + micro_batch) * mbs;
  const MicroBatchTokens data =
      synthetic_micro_batch(batches_.seed, first_sample, mbs, ctx_.dims.seq, ctx_.dims.vocab);
  const int64_t n = ctx_.rows_full();
  if (tokens) {
    acts.tokens = DeviceBuffer<int32_t>(ctx_.memory, n, MemoryKind::Activations);
    ctx_.compute.copy_to_device(acts.tokens.data(), data.tokens.data(), n * sizeof(int32_t));
  }
  if (targets) {
    acts.targets = DeviceBuffer<int32_t>(ctx_.memory, n, MemoryKind::Activations);
    ctx_.compute.copy_to_device(acts.targets.data(), data.targets.data(), n * sizeof(int32_t));
  }
}

template <typename T>
DeviceBuffer<T> PipelineRunner<T>::receive(int peer, int tag, int64_t micro_batch) {
  DeviceBuffer<T> buffer = ctx_.buffer(ctx_.rows_local() * ctx_.dims.hidden);
  {
    PhaseScope scope(ctx_.timer, Phase::PipelineBubble, Track::Stage, "wait", micro_batch);
    groups_.pp->wait_for_message(peer, tag);
  }
  PhaseScope scope(ctx_.timer, Phase::PpComm, Track::PpComm, "recv", micro_batch);
  const int64_t request = groups_.pp->irecv(buffer.data(), buffer.size(), dtype_of<T>(), peer, tag);
  groups_.pp->wait(request);
  return buffer;
}

template <typename T>
void PipelineRunner<T>::send(DeviceBuffer<T> buffer, int peer, int tag, int64_t micro_batch) {
  PhaseScope scope(ctx_.timer, Phase::PpComm, Track::PpComm, "send", micro_batch);
  const int64_t request = groups_.pp->isend(buffer.data(), buffer.size(), dtype_of<T>(), peer, tag);
  sends_.emplace_back(request, std::move(buffer));
}

template <typename T>
void PipelineRunner<T>::complete_sends(bool block) {
  if (sends_.empty()) return;
  if (block) {
    PhaseScope scope(ctx_.timer, Phase::PpComm, Track::PpComm, "wait sends");
    for (auto& [request, buffer] : sends_) groups_.pp->wait(request);
    sends_.clear();
    return;
  }
  std::erase_if(sends_, [this](auto& entry) { return groups_.pp->test(entry.first); });
}

template <typename T>
void PipelineRunner<T>::forward(const PipeAction& a, int64_t step, T* params) {
  const ChunkLayout& chunk = layout_.chunks[a.chunk];
  const int64_t v = chunk.virtual_stage;
  const bool last = v == num_virtual_ - 1;
  ChunkActivations<T>& acts = live_[{a.micro_batch, a.chunk}];
  load_tokens(acts, step, a.micro_batch, v == 0, last);
  const int64_t pp = plan_.pp;
  const int prev = static_cast<int>((groups_.pp_rank + pp - 1) % pp);
  const int next = static_cast<int>((groups_.pp_rank + 1) % pp);
  DeviceBuffer<T> input;
  if (v > 0) input = receive(prev, tag(a.micro_batch, v, false), a.micro_batch);
  PhaseScope scope(ctx_.timer, Phase::Compute, Track::Stage, "F", a.micro_batch,
                   plan_.vpp > 1 ? a.chunk : -1);
  if (v == 0) input = embedding_forward(ctx_, chunk, params, acts);
  DeviceBuffer<T> output = chunk_forward(ctx_, chunk, params, acts, std::move(input));
  if (last) {
    loss_sum_ += head_forward(ctx_, chunk, params, acts, std::move(output));
  } else {
    send(std::move(output), next, tag(a.micro_batch, v + 1, false), a.micro_batch);
  }
}

template <typename T>
void PipelineRunner<T>::backward(const PipeAction& a, T* params, T* grads) {
  const ChunkLayout& chunk = layout_.chunks[a.chunk];
  const int64_t v = chunk.virtual_stage;
  const bool last = v == num_virtual_ - 1;
  auto it = live_.find({a.micro_batch, a.chunk});
  PARPLAN_ASSERT(it != live_.end());
  ChunkActivations<T>& acts = it->second;
  const int64_t pp = plan_.pp;
  const int prev = static_cast<int>((groups_.pp_rank + pp - 1) % pp);
  const int next = static_cast<int>((groups_.pp_rank + 1) % pp);
  DeviceBuffer<T> dout;
  if (!last) dout = receive(next, tag(a.micro_batch, v, true), a.micro_batch);
  {
    PhaseScope scope(ctx_.timer, Phase::Compute, Track::Stage, "B", a.micro_batch,
                     plan_.vpp > 1 ? a.chunk : -1);
    if (last) {
      // d(mean loss)/d(token loss): every token of the global batch weighs the same.
      const double tokens = static_cast<double>(batches_.global_batch_size) * ctx_.dims.seq;
      dout = head_backward(ctx_, chunk, params, grads, acts, static_cast<T>(1.0 / tokens));
    }
    DeviceBuffer<T> dinput = chunk_backward(ctx_, chunk, params, grads, acts, std::move(dout));
    if (v == 0) {
      embedding_backward(ctx_, chunk, grads, acts, std::move(dinput));
    } else {
      dout = std::move(dinput);
    }
  }
  if (v > 0) send(std::move(dout), prev, tag(a.micro_batch, v - 1, true), a.micro_batch);
  live_.erase(it);
}

template <typename T>
double PipelineRunner<T>::run(int64_t step, T* params, T* grads) {
  loss_sum_ = 0;
  const PipelineShape shape{plan_.schedule, plan_.pp, plan_.vpp, batches_.num_micro_batches};
  for (const PipeAction& a : stage_schedule(shape, groups_.pp_rank)) {
    complete_sends(false);
    PARPLAN_ASSERT(a.op == PipeOp::Forward || a.op == PipeOp::Backward);
    if (a.op == PipeOp::Forward) {
      forward(a, step, params);
    } else {
      backward(a, params, grads);
    }
  }
  complete_sends(true);
  PARPLAN_ASSERT(live_.empty());
  return loss_sum_;
}

template class PipelineRunner<float>;
template class PipelineRunner<double>;

}  // namespace parplan::executor
