#include "executor/trainer.h"

#include <algorithm>
#include <vector>

#include "core/check.h"

namespace parplan::executor {

template <typename T>
Trainer<T>::Trainer(const Job& job, const TrainerOptions& options, Comm& world, Compute<T>& compute,
                    PhaseTimer& timer)
    : job_(job),
      options_(options),
      compute_(compute),
      timer_(timer),
      groups_(make_parallel_groups(
          world, job.plan, job.model.tied_embeddings,
          make_model_dims(job.model, job.training.seq_length, job.plan.tp).kv_replicas())),
      layout_(make_parameter_buffer_layout(job.model, job.plan, job.training.seq_length,
                                           groups_.tp_rank, groups_.pp_rank)),
      memory_([&compute](std::size_t n) { return compute.allocate(n); },
              [&compute](void* p) { compute.release(p); }),
      ctx_{compute, memory_, timer, layout_.dims} {
  const ParallelPlan& plan = job.plan;
  ctx_.tp = groups_.tp.get();
  ctx_.tp_rank = groups_.tp_rank;
  ctx_.sequence_parallel = plan.sequence_parallel && plan.tp > 1;
  ctx_.recompute = plan.recompute;
  ctx_.batch = plan.micro_batch_size;

  const int64_t n = layout_.num_elements;
  params_ = DeviceBuffer<T>(memory_, n, MemoryKind::Parameters);
  grads_ = DeviceBuffer<T>(memory_, n, MemoryKind::Gradients);
  {
    std::vector<T> host(n);
    init_parameters(layout_, options_.seed, host.data());
    compute_.copy_to_device(params_.data(), host.data(), n * sizeof(T));
  }
  const bool zero1 = plan.zero_stage >= 1 && groups_.dp != nullptr;
  shard_size_ = zero1 ? n / plan.dp : n;
  shard_begin_ = zero1 ? groups_.dp_rank * shard_size_ : 0;
  adam_m_ = DeviceBuffer<T>(memory_, shard_size_, MemoryKind::Optimizer);
  adam_v_ = DeviceBuffer<T>(memory_, shard_size_, MemoryKind::Optimizer);
  compute_.set_zero(adam_m_.data(), adam_m_.bytes());
  compute_.set_zero(adam_v_.data(), adam_v_.bytes());

  // Runs of equal weight decay, in buffer order (norms are not decayed).
  std::vector<ParamTensor> sorted = layout_.tensors;
  std::sort(sorted.begin(), sorted.end(),
            [](const ParamTensor& a, const ParamTensor& b) { return a.offset < b.offset; });
  for (const ParamTensor& t : sorted) {
    if (!segments_.empty() && segments_.back().decay == t.weight_decay &&
        segments_.back().end == t.offset) {
      segments_.back().end = t.offset + t.numel();
    } else {
      segments_.push_back({t.offset, t.offset + t.numel(), t.weight_decay});
    }
  }

  MicroBatchPlan batches;
  batches.global_batch_size = job.training.global_batch_size;
  batches.num_micro_batches = plan.num_micro_batches(job.training.global_batch_size);
  batches.seed = options_.seed;
  runner_ = std::make_unique<PipelineRunner<T>>(ctx_, layout_, job_.plan, groups_, batches);
}

template <typename T>
double Trainer<T>::run_pipeline(int64_t step_index) {
  {
    PhaseScope scope(timer_, Phase::Other, Track::Stage, "zero gradients");
    compute_.set_zero(grads_.data(), grads_.bytes());
  }
  const double loss_sum = runner_->run(step_index, params_.data(), grads_.data());
  const bool reports_loss = groups_.pp_rank == job_.plan.pp - 1 && groups_.tp_rank == 0;
  const double tokens =
      static_cast<double>(job_.training.global_batch_size) * job_.training.seq_length;
  return reports_loss ? loss_sum / tokens : 0.0;
}

template <typename T>
void Trainer<T>::synchronize_gradients() {
  T* grads = grads_.data();
  if (ctx_.sequence_parallel && layout_.replicated_end > layout_.replicated_begin) {
    PhaseScope scope(timer_, Phase::TpComm, Track::TpComm, "all_reduce (replicated grads)");
    groups_.tp->all_reduce(grads + layout_.replicated_begin,
                           layout_.replicated_end - layout_.replicated_begin, dtype_of<T>(),
                           ReduceOp::Sum);
  }
  if (groups_.kv != nullptr) {
    // Each replica of a key/value head got the gradient from its own query heads only.
    PhaseScope scope(timer_, Phase::TpComm, Track::TpComm, "all_reduce (replicated kv grads)");
    for (const ParamTensor& t : layout_.tensors) {
      if (t.kv_replicated) {
        groups_.kv->all_reduce(grads + t.offset, t.numel(), dtype_of<T>(), ReduceOp::Sum);
      }
    }
  }
  if (groups_.tied != nullptr && layout_.tied_size > 0) {
    PhaseScope scope(timer_, Phase::DpComm, Track::DpComm, "all_reduce (tied embedding)");
    groups_.tied->all_reduce(grads + layout_.tied_offset, layout_.tied_size, dtype_of<T>(),
                             ReduceOp::Sum);
  }
  if (groups_.dp == nullptr) return;
  if (job_.plan.zero_stage >= 1) {
    PhaseScope scope(timer_, Phase::DpComm, Track::DpComm, "reduce_scatter (grads)");
    groups_.dp->reduce_scatter(grads, grads + shard_begin_, shard_size_, dtype_of<T>());
  } else {
    PhaseScope scope(timer_, Phase::DpComm, Track::DpComm, "all_reduce (grads)");
    groups_.dp->all_reduce(grads, layout_.num_elements, dtype_of<T>(), ReduceOp::Sum);
  }
}

template <typename T>
double Trainer<T>::forward_backward(int64_t step_index) {
  const double loss = run_pipeline(step_index);
  synchronize_gradients();
  return loss;
}

template <typename T>
void Trainer<T>::optimizer_step(int64_t step_index) {
  {
    PhaseScope scope(timer_, Phase::Optimizer, Track::Stage, "adamw");
    AdamWConfig config = options_.adamw;
    config.step = step_index + 1;
    const int64_t lo = shard_begin_;
    const int64_t hi = shard_begin_ + shard_size_;
    for (const Segment& s : segments_) {
      const int64_t begin = std::max(lo, s.begin);
      const int64_t end = std::min(hi, s.end);
      if (begin >= end) continue;
      compute_.adamw(params_.data() + begin, grads_.data() + begin, adam_m_.data() + (begin - lo),
                     adam_v_.data() + (begin - lo), end - begin, config, s.decay);
    }
  }
  if (job_.plan.zero_stage >= 1 && groups_.dp != nullptr) {
    PhaseScope scope(timer_, Phase::DpComm, Track::DpComm, "all_gather (params)");
    groups_.dp->all_gather(params_.data() + shard_begin_, params_.data(), shard_size_,
                           dtype_of<T>());
  }
}

template <typename T>
double Trainer<T>::local_grad_norm_sq() {
  PhaseScope scope(timer_, Phase::Optimizer, Track::Stage, "grad norm");
  if (groups_.dp != nullptr && job_.plan.zero_stage == 0 && groups_.dp_rank != 0) return 0;
  const int64_t lo = shard_begin_;
  const int64_t hi = shard_begin_ + shard_size_;
  const bool tied_copy_here = layout_.tied_size > 0 && groups_.pp_rank != 0;
  // All the ranges in one call: the CUDA backend then synchronises once per step, not once
  // per tensor; the CPU backend adds the per-range sums in this order, as before.
  std::vector<const T*> data;
  std::vector<int64_t> sizes;
  for (const ParamTensor& t : layout_.tensors) {
    if (t.tp_replicated && groups_.tp_rank != 0) continue;
    if (t.kv_replicated && groups_.tp_rank % layout_.dims.kv_replicas() != 0) continue;
    if (tied_copy_here && t.offset == layout_.tied_offset) continue;
    const int64_t begin = std::max(lo, t.offset);
    const int64_t end = std::min(hi, t.offset + t.numel());
    if (begin < end) {
      data.push_back(grads_.data() + begin);
      sizes.push_back(end - begin);
    }
  }
  return compute_.sum_squares_many(data.data(), sizes.data(), static_cast<int64_t>(data.size()));
}

template <typename T>
StepResult Trainer<T>::step(int64_t step_index) {
  StepResult result;
  result.loss = forward_backward(step_index);
  result.grad_norm_sq = local_grad_norm_sq();
  optimizer_step(step_index);
  return result;
}

template <typename T>
std::vector<T> Trainer<T>::params_host() const {
  std::vector<T> out(params_.size());
  compute_.copy_to_host(out.data(), params_.data(), params_.bytes());
  return out;
}

template <typename T>
std::vector<T> Trainer<T>::grads_host() const {
  std::vector<T> out(grads_.size());
  compute_.copy_to_host(out.data(), grads_.data(), grads_.bytes());
  return out;
}

template <typename T>
void Trainer<T>::set_params_host(const std::vector<T>& values) {
  PARPLAN_CHECK(static_cast<int64_t>(values.size()) == params_.size(), "parameter count mismatch");
  compute_.copy_to_device(params_.data(), values.data(), params_.bytes());
}

template class Trainer<float>;
template class Trainer<double>;

}  // namespace parplan::executor
