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
int PipelineRunner<T>::tag(const P2pMessage& m) const {
  // MPI guarantees tags up to 32767; messages with equal tags are never in flight together.
  return static_cast<int>(
      ((m.micro_batch * num_virtual_ + m.virtual_stage) * 2 + (m.gradient ? 1 : 0)) % 32767);
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
void PipelineRunner<T>::start_group(const P2pGroup& group, int64_t micro_batch) {
  std::vector<P2pOp> ops;
  std::vector<DeviceBuffer<T>> buffers;
  bool receives = false;
  for (const P2pMessage& m : group.messages) {
    const MessageKey key{m.micro_batch, m.virtual_stage, m.gradient};
    if (m.send) {
      auto it = outputs_.find(key);
      PARPLAN_ASSERT(it != outputs_.end());
      buffers.push_back(std::move(it->second));
      outputs_.erase(it);
    } else {
      buffers.push_back(ctx_.buffer(ctx_.rows_local() * ctx_.dims.hidden));
      receives = true;
    }
    DeviceBuffer<T>& b = buffers.back();
    ops.push_back(
        {m.send, b.data(), b.size(), dtype_of<T>(), static_cast<int>(m.peer_stage), tag(m)});
  }
  std::vector<int64_t> requests;
  if (receives) {
    // Where the library can tell (MPI), the call returns once the peers have posted their
    // sends: waiting for them is the bubble.
    PhaseScope scope(ctx_.timer, Phase::PipelineBubble, Track::Stage, "wait", micro_batch);
    requests = groups_.pp->batch_isend_irecv(ops);
  } else {
    PhaseScope scope(ctx_.timer, Phase::PpComm, Track::PpComm, "send", micro_batch);
    requests = groups_.pp->batch_isend_irecv(ops);
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const P2pMessage& m = group.messages[i];
    if (m.send) {
      sends_.emplace_back(requests[i], std::move(buffers[i]));
    } else {
      arriving_.emplace(MessageKey{m.micro_batch, m.virtual_stage, m.gradient},
                        Arriving{requests[i], std::move(buffers[i])});
    }
  }
}

template <typename T>
DeviceBuffer<T> PipelineRunner<T>::take_input(const P2pMessage& m) {
  auto it = arriving_.find({m.micro_batch, m.virtual_stage, m.gradient});
  PARPLAN_ASSERT(it != arriving_.end());
  DeviceBuffer<T> buffer = std::move(it->second.buffer);
  {
    PhaseScope scope(ctx_.timer, Phase::PpComm, Track::PpComm, "recv", m.micro_batch);
    groups_.pp->wait(it->second.request);
  }
  arriving_.erase(it);
  return buffer;
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
DeviceBuffer<T> PipelineRunner<T>::forward(const PipeAction& a, int64_t step, T* params,
                                           DeviceBuffer<T> input) {
  const ChunkLayout& chunk = layout_.chunks[a.chunk];
  const int64_t v = chunk.virtual_stage;
  const bool last = v == num_virtual_ - 1;
  ChunkActivations<T>& acts = live_[{a.micro_batch, a.chunk}];
  load_tokens(acts, step, a.micro_batch, v == 0, last);
  PhaseScope scope(ctx_.timer, Phase::Compute, Track::Stage, "F", a.micro_batch,
                   plan_.vpp > 1 ? a.chunk : -1);
  if (v == 0) input = embedding_forward(ctx_, chunk, params, acts);
  DeviceBuffer<T> output = chunk_forward(ctx_, chunk, params, acts, std::move(input));
  if (!last) return output;
  loss_sum_ += head_forward(ctx_, chunk, params, acts, std::move(output));
  return {};
}

template <typename T>
DeviceBuffer<T> PipelineRunner<T>::backward(const PipeAction& a, T* params, T* grads,
                                            DeviceBuffer<T> dout) {
  const ChunkLayout& chunk = layout_.chunks[a.chunk];
  const int64_t v = chunk.virtual_stage;
  const bool last = v == num_virtual_ - 1;
  auto it = live_.find({a.micro_batch, a.chunk});
  PARPLAN_ASSERT(it != live_.end());
  ChunkActivations<T>& acts = it->second;
  DeviceBuffer<T> dinput;
  {
    PhaseScope scope(ctx_.timer, Phase::Compute, Track::Stage, "B", a.micro_batch,
                     plan_.vpp > 1 ? a.chunk : -1);
    if (last) {
      // d(mean loss)/d(token loss): every token of the global batch weighs the same.
      const double tokens = static_cast<double>(batches_.global_batch_size) * ctx_.dims.seq;
      dout = head_backward(ctx_, chunk, params, grads, acts, static_cast<T>(1.0 / tokens));
    }
    dinput = chunk_backward(ctx_, chunk, params, grads, acts, std::move(dout));
    if (v == 0) embedding_backward(ctx_, chunk, grads, acts, std::move(dinput));
  }
  live_.erase(it);
  return dinput;
}

template <typename T>
double PipelineRunner<T>::run(int64_t step, T* params, T* grads) {
  loss_sum_ = 0;
  const PipelineShape shape{plan_.schedule, plan_.pp, plan_.vpp, batches_.num_micro_batches};
  const int64_t stage = groups_.pp_rank;
  const std::vector<PipeAction> actions = stage_schedule(shape, stage);
  const std::vector<P2pGroup> groups = plan_transfers(shape, stage);
  std::size_t next_group = 0;
  auto start_groups_before = [&](int64_t action, int64_t micro_batch) {
    for (; next_group < groups.size() && groups[next_group].before_action == action; ++next_group) {
      start_group(groups[next_group], micro_batch);
    }
  };
  for (int64_t i = 0; i < static_cast<int64_t>(actions.size()); ++i) {
    const PipeAction& a = actions[i];
    PARPLAN_ASSERT(a.op == PipeOp::Forward || a.op == PipeOp::Backward);
    complete_sends(false);
    start_groups_before(i, a.micro_batch);
    DeviceBuffer<T> input;
    if (auto in = action_input(a, shape, stage)) input = take_input(*in);
    DeviceBuffer<T> output = a.op == PipeOp::Forward ? forward(a, step, params, std::move(input))
                                                     : backward(a, params, grads, std::move(input));
    if (auto out = action_output(a, shape, stage)) {
      outputs_.emplace(MessageKey{out->micro_batch, out->virtual_stage, out->gradient},
                       std::move(output));
    }
  }
  start_groups_before(static_cast<int64_t>(actions.size()), actions.back().micro_batch);
  PARPLAN_ASSERT(next_group == groups.size() && outputs_.empty() && arriving_.empty());
  complete_sends(true);
  PARPLAN_ASSERT(live_.empty());
  return loss_sum_;
}

template class PipelineRunner<float>;
template class PipelineRunner<double>;

}  // namespace parplan::executor
