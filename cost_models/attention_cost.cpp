#include "cost_models/attention_cost.h"

#include <algorithm>

#include "core/units.h"
#include "cost_models/memory_model.h"
#include "cost_models/op_time.h"

namespace parplan::cost {

namespace {

// Flash attention throughput relative to the GPU's maximum achievable matmul throughput
// (MAMF). Forward: FlashAttention-2 on A100 reaches at best 73% of peak (0.84 of A100's MAMF),
// FlashAttention-3 on H100 75% (0.93 of H100's MAMF): 0.85. Backward runs five matmuls per
// block with more synchronisation: about 50% of peak on A100 (FlashAttention-2 abstract:
// "50-73%"), ~500 TFLOP/s on H100 (FlashAttention-3): 0.6 of MAMF.
// (Dao 2023, arXiv 2307.08691; Shah et al. 2024, arXiv 2407.08608.)
constexpr double kFlashForwardOfMamf = 0.85;
constexpr double kFlashBackwardOfMamf = 0.6;
// Short sequences leave the per-block pipeline half empty: the kernels reach half their
// long-sequence throughput when a query attends to this many keys (FlashAttention-3 Fig. 5:
// 2x from 512 to 8k keys).
constexpr double kFlashHalfKeys = 256;
// FlashAttention-2-design kernels on Hopper and later GPUs (no wgmma/TMA): 35% instead of
// 75% utilisation on H100 (FlashAttention-3 §1).
constexpr double kPortableFlashOnNewerGpus = 0.47;
// FlashAttention-1-design kernels relative to FlashAttention-2 on the same Ampere GPU: the
// middles of their reported utilisations, 32.5% (25-40%) over 61.5% (50-73%) of A100's peak
// (Dao 2023, arXiv 2307.08691, §1 and abstract, where FA2 is "around 2x" faster): 0.53.
constexpr double kFa1DesignOfFa2 = 0.53;

bool newer_than_ampere(const GpuSpec& gpu) {
  return gpu.architecture == "hopper" || gpu.architecture == "blackwell";
}

double peak_flops(const GpuSpec& gpu, Precision precision) {
  return gpu.computed_peak_tflops(precision) * kTera;
}

// Throughput of the framework's flash-attention kernel relative to a kernel written for the
// GPU. On Hopper and later, kernels of Ampere design (warp-level mma.sync, no wgmma or TMA)
// share one bound, FlashAttention-2's 35% of peak (FlashAttention-3 §1), whichever of the
// Ampere designs they follow; on Ampere the FlashAttention-1 design is the slower of the two.
double flash_design_fraction(const FrameworkTraits& traits, const GpuSpec& gpu) {
  if (!traits.attention_kernel_native && newer_than_ampere(gpu)) return kPortableFlashOnNewerGpus;
  return traits.attention_kernel_fa1_design ? kFa1DesignOfFa2 : 1.0;
}

}  // namespace

AttentionCore attention_core(const CostContext& ctx) {
  const ModelSpec& m = *ctx.model;
  const ParallelPlan& p = *ctx.plan;
  const TrainingSpec& tr = *ctx.training;
  const GpuSpec& gpu = ctx.node->gpu;
  const double b = static_cast<double>(p.micro_batch_size);
  const double s = static_cast<double>(tr.seq_length);
  const double heads = static_cast<double>(m.num_attention_heads) / static_cast<double>(p.tp);
  const double qk_dim = static_cast<double>(m.head_dim);
  const double v_dim = m.mla ? static_cast<double>(m.mla->v_head_dim) : qk_dim;
  // Causal attention: each query attends to half the keys on average; the cp ranks share
  // the work evenly (load-balanced chunks).
  const double full = 2.0 * b * s * s * heads * (qk_dim + v_dim) / static_cast<double>(p.cp);
  AttentionCore core;
  core.model_flops_forward = 0.5 * full;
  const Precision precision = attention_precision_of(tr);
  if (gpu.attention_forward_tflops > 0 && gpu.attention_backward_tflops > 0 &&
      gpu.kernel_figures_apply(tr.precision)) {
    // A measured attention kernel (a profile of this machine): its throughput is counted over
    // the whole score matrix, 4 b h s^2 d forward and 10 b h s^2 d backward.
    const double square = b * heads * s * s * qk_dim / static_cast<double>(p.cp);
    core.executed_flops_forward = 4 * square;
    const double clock = gpu.sustained_clock_fraction;
    core.forward = 4 * square / (gpu.attention_forward_tflops * kTera * clock);
    core.backward = 10 * square / (gpu.attention_backward_tflops * kTera * clock);
    return core;
  }
  if (ctx.traits.flash_attention || p.cp > 1) {
    core.executed_flops_forward = core.model_flops_forward;
    const double fraction =
        gpu.max_matmul_efficiency(precision) * flash_design_fraction(ctx.traits, gpu);
    const double keys = 0.5 * s;
    const double ramp = keys / (keys + kFlashHalfKeys);
    // Tensor-core kernels all run at the clock the GPU sustains in long runs, as the GEMMs do
    // (core/gemm_efficiency.cpp); the kernel figures above are burst measurements.
    const double peak = peak_flops(gpu, precision) * gpu.sustained_clock_fraction;
    core.forward =
        std::max(gpu.kernel_launch_us * kUs,
                 core.model_flops_forward / (peak * fraction * kFlashForwardOfMamf * ramp));
    core.backward =
        std::max(gpu.kernel_launch_us * kUs,
                 2.5 * core.model_flops_forward / (peak * fraction * kFlashBackwardOfMamf * ramp));
    return core;
  }
  // Unfused (Megatron-LM 2020-2022): batched QK^T and PV GEMMs over b*heads, then fused
  // scale-mask-softmax and dropout over the whole s x s score matrix.
  core.executed_flops_forward = full;
  const OpTime attn{ctx, gpu, precision};
  const double batch = b * heads;
  const double scores = batch * s * s;
  const double bpv = activation_bytes(tr.precision);
  const bool dropout = model_uses_dropout(m) && ctx.traits.model_dropout;
  const double qk = attn.gemm(s, s, qk_dim, batch);
  const double pv = attn.gemm(s, v_dim, s, batch);
  const double softmax_bytes = 2 * bpv * scores;                      // read scores, write probs
  const double dropout_bytes = dropout ? (2 * bpv + 1) * scores : 0;  // read, write, mask
  core.forward = qk + pv + attn.memory(softmax_bytes) + (dropout ? attn.memory(dropout_bytes) : 0);
  // Backward: two GEMMs per forward GEMM; softmax and dropout backward read saved tensors.
  core.backward =
      2 * (qk + pv) + attn.memory(kBackwardBytesFactor * (softmax_bytes + dropout_bytes));
  return core;
}

}  // namespace parplan::cost
