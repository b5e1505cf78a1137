#include "cost_models/memory_model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/schedule.h"
#include "core/units.h"
#include "cost_models/activation_memory.h"
#include "cost_models/parameter_layout.h"

namespace parplan::cost {

double StageMemory::total_bytes() const {
  return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + transient_bytes +
         logits_bytes + workspace_bytes + fragmentation_bytes;
}

bool model_uses_dropout(const ModelSpec& model) {
  return model.normalization == Normalization::LayerNorm;
}

MemoryEstimate estimate_memory(const Job& job) {
  return estimate_memory(job, framework_traits(job.framework, job.training, job.plan));
}

MemoryEstimate estimate_memory(const Job& job, const FrameworkTraits& traits) {
  const ModelSpec& model = job.model;
  const ParallelPlan& plan = job.plan;
  const TrainingSpec& training = job.training;
  const double t = static_cast<double>(plan.tp);
  const double bpv = activation_bytes(training.precision);

  ActivationOptions act;
  act.micro_batch_size = plan.micro_batch_size;
  act.seq_length = training.seq_length;
  act.tp = plan.tp;
  act.cp = plan.cp;
  act.sequence_parallel = plan.sequence_parallel && plan.tp > 1;
  act.recompute = plan.recompute;
  act.flash_attention = traits.flash_attention;
  act.dropout = model_uses_dropout(model) && traits.model_dropout;
  act.bytes_per_value = bpv;
  if (traits.fp8_saves_gemm_inputs) act.gemm_input_bytes = 1;  // set for fp8 training only
  act.selective_keeps_half_gemm_outputs = traits.operator_level_selective_recompute;
  const LayerActivationBytes dense = dense_layer_activation_bytes(model, act);
  const LayerActivationBytes moe =
      model.moe ? moe_layer_activation_bytes(model, act, plan.ep, plan.expert_tp())
                : LayerActivationBytes{};

  PipelineShape shape;
  shape.kind = plan.schedule;
  shape.pp = plan.pp;
  shape.vpp = plan.vpp;
  shape.num_micro_batches = plan.num_micro_batches(training.global_batch_size);

  const double tokens = static_cast<double>(plan.micro_batch_size) *
                        static_cast<double>(training.seq_length) / static_cast<double>(plan.cp);
  const double h = static_cast<double>(model.hidden_size);
  const double rep = act.sequence_parallel ? 1.0 / t : 1.0;
  const double fc1_width = static_cast<double>(model.ffn_hidden_size) *
                           (model.activation == Activation::Swiglu ? 2.0 : 1.0);

  MemoryEstimate out;
  out.capacity_bytes = job.cluster.node.gpu.memory_gib * kGiB;
  for (const StageParameters& sp : stage_parameters(job)) {
    StageMemory m;
    m.stage = sp.stage;
    m.params = sp.dense_params + sp.expert_params;
    const ShardedBytes sharded =
        sharded_state_bytes(sp, plan, traits, training, job.cluster.node.gpu);
    m.weights_bytes = sharded.weights;
    m.gradients_bytes = sharded.gradients;
    m.optimizer_bytes = sharded.optimizer;
    m.transient_bytes = sharded.transient;

    m.in_flight_chunks = peak_in_flight_chunks(shape, sp.stage);
    const double layers_per_chunk =
        static_cast<double>(sp.num_layers) / static_cast<double>(plan.vpp);
    const double per_layer_stored =
        sp.num_layers == 0
            ? 0.0
            : (static_cast<double>(sp.num_moe_layers) * moe.stored +
               static_cast<double>(sp.num_layers - sp.num_moe_layers) * dense.stored) /
                  static_cast<double>(sp.num_layers);
    m.activations_bytes =
        static_cast<double>(m.in_flight_chunks) * layers_per_chunk * per_layer_stored;
    const double layer_transient =
        std::max(sp.num_moe_layers > 0 ? moe.transient : 0.0,
                 sp.num_layers > sp.num_moe_layers ? dense.transient : 0.0);
    // Backward working set: the gradient of the widest activation (FC1 output) alive beside
    // the stored tensors.
    m.transient_bytes += layer_transient + bpv * tokens * fc1_width / t;

    if (traits.pipe_buffers_per_micro_batch && plan.pp > 1) {
      // Received input and sent output activation of every in-flight micro-batch.
      m.activations_bytes += static_cast<double>(m.in_flight_chunks) * 2 * bpv * tokens * h;
    }
    if (sp.stage == 0 && act.dropout) {
      m.activations_bytes += static_cast<double>(m.in_flight_chunks) * tokens * h * rep;  // mask
    }
    if (sp.stage == plan.pp - 1) {
      // Final norm input and output-layer input, then the logits and loss buffers of one
      // micro-batch (vocabulary split over tp).
      m.activations_bytes += 2 * bpv * tokens * h * rep;
      const double vocab = static_cast<double>(model.vocab_size) / t;
      m.logits_bytes = tokens * vocab * traits.logits_bytes_per_element;
    }
    m.workspace_bytes = traits.workspace_gib * kGiB;
    // Reserved = in use / (1 - fragmented fraction) for the per-step tensors.
    const double per_step = m.activations_bytes + m.transient_bytes + m.logits_bytes;
    m.fragmentation_bytes =
        per_step * traits.allocator_fragmentation / (1.0 - traits.allocator_fragmentation);
    out.stages.push_back(m);
  }
  for (const auto& stage : out.stages) {
    if (stage.total_bytes() > out.peak_bytes) {
      out.peak_bytes = stage.total_bytes();
      out.peak_stage = stage.stage;
    }
  }
  // Model sizes are bounded (core/model_spec.h), so this holds for every accepted job.
  PARPLAN_CHECK(std::isfinite(out.peak_bytes), job.file, ": the memory model gave ", out.peak_bytes,
                " bytes for model ", job.model.name);
  out.fits = out.peak_bytes <= out.capacity_bytes;
  return out;
}

}  // namespace parplan::cost
