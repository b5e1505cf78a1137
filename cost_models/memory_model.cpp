#include "cost_models/memory_model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/schedule.h"
#include "core/units.h"
#include "cost_models/activation_memory.h"
#include "cost_models/moe_dispatch.h"
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

ActivationOptions activation_options(const Job& job, const FrameworkTraits& traits) {
  const ParallelPlan& plan = job.plan;
  const TrainingSpec& training = job.training;
  ActivationOptions act;
  act.micro_batch_size = plan.micro_batch_size;
  act.seq_length = training.seq_length;
  act.tp = plan.tp;
  act.cp = plan.cp;
  act.sequence_parallel = plan.sequence_parallel && plan.tp > 1;
  act.recompute = plan.recompute;
  act.flash_attention = traits.flash_attention;
  act.dropout = model_uses_dropout(job.model) && traits.model_dropout;
  act.bytes_per_value = activation_bytes(training.precision);
  if (traits.fp8_saves_gemm_inputs) act.gemm_input_bytes = 1;  // set for fp8 training only
  act.selective_keeps_half_gemm_outputs = traits.operator_level_selective_recompute;
  act.recompute_modules = plan.recompute_modules;
  act.mla = job.model.mla.has_value();
  act.moe_combine_keeps_expert_outputs = traits.moe_combine_keeps_expert_outputs;
  return act;
}

OffloadedLayers offloaded_layers(const Job& job) {
  OffloadedLayers out;
  const int64_t end = std::min(job.model.num_layers, job.plan.offload_activation_layers);
  for (int64_t l = 0; l < end; ++l) {
    if (job.model.is_moe_layer(l)) {
      ++out.moe;
    } else {
      ++out.dense;
    }
  }
  return out;
}

namespace {

// What the memory of every stage shares: the activation model's options and per-layer sizes,
// the pipeline schedule, and the tokens of one micro-batch on one GPU.
struct ActivationInputs {
  ActivationOptions options;
  LayerActivationBytes dense;
  LayerActivationBytes moe;
  PipelineShape shape;
  double tokens = 0;
};

ActivationInputs activation_inputs(const Job& job, const FrameworkTraits& traits) {
  const ModelSpec& model = job.model;
  const ParallelPlan& plan = job.plan;
  const TrainingSpec& training = job.training;
  ActivationInputs in;
  in.options = activation_options(job, traits);
  const ActivationOptions& act = in.options;
  in.dense = dense_layer_activation_bytes(model, act);
  in.moe = model.moe ? moe_layer_activation_bytes(model, act, plan.ep, plan.expert_tp())
                     : LayerActivationBytes{};
  in.shape = pipeline_shape(plan, training.global_batch_size);
  in.tokens = static_cast<double>(plan.micro_batch_size) *
              static_cast<double>(training.seq_length) / static_cast<double>(plan.cp);
  return in;
}

// Activations of one stage: its layers' stored tensors for every micro-batch chunk in flight,
// the pipeline buffers, the first stage's dropout mask and the last stage's output layer inputs.
double stage_activation_bytes(const Job& job, const FrameworkTraits& traits,
                              const StageParameters& sp, const ActivationInputs& in,
                              int64_t in_flight_chunks) {
  const ParallelPlan& plan = job.plan;
  const double bpv = in.options.bytes_per_value;
  const double h = static_cast<double>(job.model.hidden_size);
  const double rep = in.options.sequence_parallel ? 1.0 / static_cast<double>(plan.tp) : 1.0;
  const double chunks = static_cast<double>(in_flight_chunks);
  const double layers_per_chunk =
      static_cast<double>(sp.num_layers) / static_cast<double>(plan.vpp);
  const double per_layer_stored =
      sp.num_layers == 0
          ? 0.0
          : (static_cast<double>(sp.num_moe_layers) * in.moe.stored +
             static_cast<double>(sp.num_layers - sp.num_moe_layers) * in.dense.stored) /
                static_cast<double>(sp.num_layers);
  double bytes = chunks * layers_per_chunk * per_layer_stored;
  // Offloaded layers' saved tensors live in host memory between their forward and backward
  // (Megatron-Core cpu_offloading through Transformer Engine's offload handler; without
  // pipelining, the only case it allows, one micro-batch is in flight).
  const OffloadedLayers offloaded = sp.stage == 0 ? offloaded_layers(job) : OffloadedLayers{};
  bytes -= chunks * (static_cast<double>(offloaded.moe) * in.moe.stored +
                     static_cast<double>(offloaded.dense) * in.dense.stored);
  if (traits.pipe_buffers_per_micro_batch && plan.pp > 1) {
    // Received input and sent output activation of every in-flight micro-batch.
    bytes += chunks * 2 * bpv * in.tokens * h;
  }
  if (sp.stage == 0 && in.options.dropout) {
    bytes += chunks * in.tokens * h * rep;  // mask
  }
  if (sp.stage == plan.pp - 1) {
    // Final norm input and output-layer input.
    bytes += 2 * bpv * in.tokens * h * rep;
  }
  return bytes;
}

// The larger of the stage's MoE and dense layers' figure (stored or transient bytes), over the
// kinds of layer the stage holds.
double largest_stage_layer(const StageParameters& sp, const ActivationInputs& in,
                           double LayerActivationBytes::*figure) {
  return std::max(sp.num_moe_layers > 0 ? in.moe.*figure : 0.0,
                  sp.num_layers > sp.num_moe_layers ? in.dense.*figure : 0.0);
}

// One stage's memory: its sharded weights, gradients and optimizer state, activations,
// backward working set, logits (last stage), framework workspace and allocator reserve.
StageMemory stage_memory(const Job& job, const FrameworkTraits& traits, const StageParameters& sp,
                         const ActivationInputs& in) {
  const ParallelPlan& plan = job.plan;
  const double t = static_cast<double>(plan.tp);
  StageMemory m;
  m.stage = sp.stage;
  m.params = sp.dense_params + sp.expert_params;
  const ShardedBytes sharded = sharded_state_bytes(sp, plan, traits, job.training);
  m.weights_bytes = sharded.weights;
  m.gradients_bytes = sharded.gradients;
  m.optimizer_bytes = sharded.optimizer;
  m.transient_bytes = sharded.transient;

  m.in_flight_chunks = peak_in_flight_chunks(in.shape, sp.stage);
  double combined_step_layer_bytes = 0;
  if (plan.moe_a2a_overlap) {
    // The batch-level all-to-all overlap (Megatron-Core combined 1F1B) runs one more warm-up
    // forward, then each step's forward beside the backward of the oldest chunk in flight,
    // layer by layer: the forward of layer i runs with the backward of layer L-1-i, whose
    // saved tensors are freed right after (model_chunk_schedule_plan.py, "forward_layer[0] +
    // backward_layer[3]"; pipeline_parallel/utils.py ScheduleNode._backward runs without
    // keeping the graph and drops its inputs and outputs). The new chunk grows as the old one
    // shrinks, so the warm-up forwards' chunks are alive plus about one layer (the old layer's
    // attention backward runs after the new layer's MoE forward).
    m.in_flight_chunks = combined_1f1b_warmup_forwards(in.shape, sp.stage);
    if (m.in_flight_chunks < in.shape.num_micro_batches * in.shape.vpp && sp.num_layers > 0) {
      combined_step_layer_bytes = largest_stage_layer(sp, in, &LayerActivationBytes::stored);
    }
  }
  m.activations_bytes =
      stage_activation_bytes(job, traits, sp, in, m.in_flight_chunks) + combined_step_layer_bytes;
  const double layer_transient = largest_stage_layer(sp, in, &LayerActivationBytes::transient);
  // Backward working set: the gradient of the widest activation (FC1 output) alive beside
  // the stored tensors.
  const double fc1_width = static_cast<double>(job.model.ffn_hidden_size) *
                           (job.model.activation == Activation::Swiglu ? 2.0 : 1.0);
  m.transient_bytes += layer_transient + in.options.bytes_per_value * in.tokens * fc1_width / t;
  if (sp.stage == plan.pp - 1) {
    // The logits and loss buffers of one micro-batch (vocabulary split over tp).
    const double vocab = static_cast<double>(job.model.vocab_size) / t;
    m.logits_bytes = in.tokens * vocab * traits.logits_bytes_per_element;
  }
  // The framework allowance, plus the calibrated overhead (core/calibration.h; + 0.0 is exact).
  m.workspace_bytes = (traits.workspace_gib + job.calibration.memory_overhead_gib) * kGiB;
  // Reserved = in use / (1 - fragmented fraction) for the per-step tensors. Expandable
  // segments map pages on demand into one growing segment per stream, so the reserve follows
  // the allocated peak (PyTorch docs, CUDA semantics, "Optimizing memory usage with
  // PYTORCH_CUDA_ALLOC_CONF"); the fragmentation that remains inside a segment is not modelled.
  const double fragmentation = traits.expandable_segments ? 0.0 : traits.allocator_fragmentation;
  const double per_step = m.activations_bytes + m.transient_bytes + m.logits_bytes;
  m.fragmentation_bytes = per_step * fragmentation / (1.0 - fragmentation);
  return m;
}

}  // namespace

MemoryEstimate estimate_memory(const Job& job, const FrameworkTraits& traits) {
  const ActivationInputs in = activation_inputs(job, traits);
  MemoryEstimate out;
  out.capacity_bytes = job.cluster.node.gpu.memory_gib * kGiB;
  for (const StageParameters& sp : stage_parameters(job, traits)) {
    out.stages.push_back(stage_memory(job, traits, sp, in));
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
