#include "cost_models/layer_cost.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/collective.h"
#include "core/units.h"
#include "cost_models/attention_cost.h"
#include "cost_models/collective_model.h"
#include "cost_models/expert_rows.h"
#include "cost_models/lora.h"
#include "cost_models/memory_model.h"
#include "cost_models/moe_dispatch.h"
#include "cost_models/op_time.h"

namespace parplan::cost {

namespace {

// fp8 GEMM inputs are quantised in their own kernel: read the 16-bit value, write the fp8
// value and its transpose for the backward GEMMs (Transformer Engine cast_transpose), 4 bytes
// per element.
constexpr double kFp8CastBytes = 4.0;
// NCCL runs one thread block per channel; collectives overlapped with compute hold about 16
// SMs for their duration (Hopper/Ampere NVLink rings use 16-32 channels; Transformer Engine
// userbuffers reserve 16-32 SMs), which the concurrent GEMMs lose.
constexpr double kCommSms = 16.0;

// DeepEP's normal kernels run on 20 SMs (its Buffer default); beside them a GEMM loses about
// 20% of its efficiency on a 132-SM H100 (Megatron Core MoE report, arXiv 2603.07685 §4.2.3,
// as the Megatron-LM docs' moe_a2a_overlap.md quote it): 1.32 times the SMs' share, the share
// lost to the held SMs plus the wave quantisation and memory traffic they add.
constexpr double kDeepEpSms = 20.0;
constexpr double kDeepEpGemmCostPerSmShare = 0.20 / (kDeepEpSms / 132.0);

// Fraction of the concurrent computation's time an overlapped token dispatch or combine costs
// it: DeepEP's measured cost, else the SMs a NCCL all-to-all (or HybridEP) holds.
double overlapped_dispatch_compute_cost(const GpuSpec& gpu, MoeDispatcher dispatcher) {
  if (dispatcher != MoeDispatcher::DeepEP || gpu.sm_count <= 0) return comm_sm_fraction(gpu);
  return std::min(1.0, kDeepEpGemmCostPerSmShare * kDeepEpSms / static_cast<double>(gpu.sm_count));
}

}  // namespace

double comm_sm_fraction(const GpuSpec& gpu) {
  return gpu.sm_count > 0 ? std::min(1.0, kCommSms / static_cast<double>(gpu.sm_count)) : 0.0;
}

double memory_kernel_bytes_per_s(const GpuSpec& gpu, const FrameworkTraits& traits,
                                 const char* kind, Precision job_precision) {
  if (kind != nullptr && gpu.kernel_figures_apply(job_precision)) {
    if (auto it = gpu.kernel_gbps.find(kind); it != gpu.kernel_gbps.end())
      return gbps_to_bytes_per_s(it->second);
  }
  return gbps_to_bytes_per_s(gpu.hbm_bandwidth_gbps) * gpu.hbm_efficiency *
         traits.memory_kernel_bandwidth_fraction;
}

namespace {

// Exposed part of a tensor-parallel collective that can hide under `hideable` seconds of
// GEMM work: chunked pipelining (userbuffers) always exposes the first chunk.
double exposed(double comm, double hideable, double chunks) {
  return std::max(comm - hideable, 0.0) + comm / std::max(1.0, chunks);
}

struct BlockTimes {
  double forward_compute = 0;
  double backward_compute = 0;
  double forward_gemm = 0;    // GEMM part of the forward (hides TP communication)
  double backward_wgrad = 0;  // weight-gradient GEMMs (hide backward TP communication)
  double adapter_wgrad = 0;   // LoRA adapters' weight-gradient GEMMs
  double backward_dgrad = 0;
  double recompute_selective = 0;  // forward seconds of the ops plan.recompute_modules redoes
  double recompute_selective_flops = 0;
  double model_flops = 0;
  double executed_flops = 0;
};

// The Megatron recompute modules (core/parallel_plan.h recompute_module) an op of this file
// belongs to, by the op's name.
unsigned recompute_modules_of(std::string_view op) {
  namespace rm = recompute_module;
  if (op == "norm 1" || op == "norm 2") return rm::kLayernorm;
  if (op == "q up projection" || op == "kv up projection") return rm::kMlaUpProj;
  if (op == "mlp fc1" || op == "mlp fc2" || op == "mlp activation") return rm::kMlp;
  if (op == "expert activation") return rm::kMoe | rm::kMoeAct;
  if (op == "shared expert fc1" || op == "shared expert fc2" || op == "shared expert activation") {
    return rm::kMoe | rm::kSharedExperts;
  }
  if (op == "expert fc1 (grouped)" || op == "expert fc2 (grouped)" || op == "router" ||
      op == "router softmax/top-k" || op == "token permutation") {
    return rm::kMoe;
  }
  return 0;
}

// GEMM forward/backward of one linear layer with fp8 quantisation overheads.
void record(const CostContext& ctx, const char* name, const char* kind, double flops, double bytes,
            double forward_s, double backward_s) {
  if (ctx.ops_out != nullptr)
    ctx.ops_out->push_back({name, kind, flops, bytes, forward_s, backward_s});
}

// Adds an op's forward to what selective recomputation redoes when the plan's recompute
// modules include it.
void add_if_recomputed(BlockTimes& t, const CostContext& ctx, const char* name, double forward_s,
                       double flops) {
  if (ctx.plan->recompute != Recompute::Selective) return;
  if ((ctx.plan->recompute_modules & recompute_modules_of(name)) == 0) return;
  t.recompute_selective += forward_s;
  t.recompute_selective_flops += flops;
}

// Weights are frozen under LoRA: the backward pass computes the input gradient only.
bool frozen_weights(const CostContext& ctx) { return ctx.training->method == TrainingMethod::Lora; }

// `batch` independent GEMMs of one shape run as one grouped GEMM (one launch, their tiles
// scheduled together).
void add_linear(BlockTimes& t, const char* name, const OpTime& ops, const CostContext& ctx,
                double m, double n, double k, double batch = 1) {
  const bool frozen = frozen_weights(ctx);
  const double f = ops.gemm_forward(m, n, k, batch);
  const double dg = ops.gemm_dgrad(m, n, k, batch);
  const double wg = frozen ? 0.0 : ops.gemm_wgrad(m, n, k, batch);
  record(ctx, name, "gemm", 2 * m * n * k * batch, 0, f, dg + wg);
  t.forward_compute += f;
  t.forward_gemm += f;
  t.backward_compute += dg + wg;
  t.backward_wgrad += wg;
  t.backward_dgrad += dg;
  const double flops = 2 * m * n * k * batch;
  const double passes = frozen ? 2.0 : 3.0;
  t.model_flops += passes * flops;
  t.executed_flops += passes * flops;
  if (ctx.training->precision == Precision::Fp8) {
    // Quantise the input (m x k) forward and the output gradient (m x n) backward.
    const double cast_forward = ops.memory(kFp8CastBytes * m * k * batch);
    const double cast_backward = ops.memory(kFp8CastBytes * m * n * batch);
    t.forward_compute += cast_forward;
    t.backward_compute += cast_backward;
    record(ctx, "fp8 cast", "memory", 0, kFp8CastBytes * m * k * batch, cast_forward,
           cast_backward);
    add_if_recomputed(t, ctx, name, cast_forward, 0);
  }
  add_if_recomputed(t, ctx, name, f, flops);
}

// A norm or an elementwise kernel moving `bytes` forward (and about twice that backward).
void add_memory_op(BlockTimes& t, const char* name, const OpTime& ops, const CostContext& ctx,
                   double bytes) {
  const double f = ops.memory(bytes);
  const double b = ops.memory(kBackwardBytesFactor * bytes);
  t.forward_compute += f;
  t.backward_compute += b;
  record(ctx, name, "memory", 0, bytes, f, b);
  add_if_recomputed(t, ctx, name, f, 0);
}

// A memory-bound op whose forward and backward kernels are known kinds (norms, activations),
// with the bytes each moves: read input and write output forward; read input and output
// gradient and write input gradient backward (the counts `parplan profile` uses).
void add_kernel_op(BlockTimes& t, const char* name, const OpTime& ops, const CostContext& ctx,
                   double forward_bytes, double backward_bytes, const char* forward_kind,
                   const char* backward_kind) {
  const double f = ops.memory(forward_bytes, forward_kind);
  const double b = ops.memory(backward_bytes, backward_kind);
  t.forward_compute += f;
  t.backward_compute += b;
  record(ctx, name, "memory", 0, forward_bytes, f, b);
  add_if_recomputed(t, ctx, name, f, 0);
}

// LoRA adapters of one layer: per adapted projection the A (in -> r) and B (r -> out) GEMMs
// forward, and their input and weight gradients backward (cost_models/lora.h layout).
void add_adapters(BlockTimes& t, const OpTime& ops, const CostContext& ctx, bool moe_layer) {
  if (ctx.training->method != TrainingMethod::Lora) return;
  const double r = static_cast<double>(ctx.training->lora_rank);
  const double tp = static_cast<double>(ctx.plan->tp);
  const double T = ctx.tokens;
  double forward = 0, backward = 0, weight = 0, flops = 0;
  for (const auto& p : adapted_projections(*ctx.model, moe_layer)) {
    const double in = p.column_parallel ? p.in : p.in / tp;
    const double out = p.column_parallel ? p.out / tp : p.out;
    for (const auto& [n, k] : {std::pair{r, in}, std::pair{out, r}}) {
      const double wgrad = ops.gemm_wgrad(T, n, k);
      forward += ops.gemm_forward(T, n, k);
      backward += ops.gemm_dgrad(T, n, k) + wgrad;
      weight += wgrad;
      flops += 2 * T * n * k;
    }
  }
  record(ctx, "lora adapters (all)", "gemm", flops, 0, forward, backward);
  t.forward_compute += forward;
  t.backward_compute += backward;
  t.adapter_wgrad += weight;
  t.model_flops += 3 * flops;
  t.executed_flops += 3 * flops;
}

}  // namespace

PassTime& PassTime::operator+=(const PassTime& o) {
  compute += o.compute;
  tp_comm += o.tp_comm;
  cp_comm += o.cp_comm;
  ep_comm += o.ep_comm;
  return *this;
}

PassTime operator*(const PassTime& t, double factor) {
  PassTime out = t;
  out.compute *= factor;
  out.tp_comm *= factor;
  out.cp_comm *= factor;
  out.ep_comm *= factor;
  return out;
}

CostContext CostContext::make(const Job& job, const NodeSpec& node) {
  CostContext ctx;
  ctx.model = &job.model;
  ctx.plan = &job.plan;
  ctx.training = &job.training;
  ctx.node = &node;
  ctx.traits = framework_traits(job.framework, job.training, job.plan);
  ctx.tp_group = place_group(job.plan, node, {"tp"});
  ctx.cp_group = place_group(job.plan, node, {"cp"});
  ctx.ep_group = place_group(job.plan, node, {"ep"});
  // The expert-TP group: the innermost expert_tp ranks (Megatron-Core's expert grid); only MoE
  // layers use it.
  if (job.model.moe) {
    ctx.etp_group = place_strided(job.plan.expert_tp(), 1, node, job.plan.num_gpus());
  }
  ctx.moe_dispatcher = resolved_moe_dispatcher(ctx.traits, job.plan, node, ctx.ep_group);
  ctx.tokens = static_cast<double>(job.plan.micro_batch_size) *
               static_cast<double>(job.training.seq_length) / static_cast<double>(job.plan.cp);
  ctx.moe_throughput_fraction = job.calibration.moe_throughput_fraction;
  ctx.micro_batch_overhead_s = job.calibration.micro_batch_overhead_s;
  return ctx;
}

namespace {

// Widths, per tensor-parallel rank, that the attention's projections leave to the rest of
// the layer.
struct AttentionWidths {
  double rotary = 0;  // query and key parts that rotary embedding rotates
  // The tensor entering the attention's column-parallel GEMMs, where tensor parallelism
  // gathers (sequence parallel) or all-reduces the input gradient (otherwise).
  double entry = 0;
};

// Multi-latent attention projections (DeepSeek-V2 §2.1.2; Megatron-Core MLASelfAttention): the
// down-projections to the latent ranks are replicated on every tensor-parallel rank, the
// up-projections are column-parallel over the heads, each latent is RMS-normed, and only the
// decoupled rope part of the query heads and the one shared rope key are rotated.
AttentionWidths add_mla_projections(BlockTimes& blk, const OpTime& ops, const CostContext& ctx) {
  const ModelSpec& m = *ctx.model;
  const MlaSpec& mla = *m.mla;
  const double t = static_cast<double>(ctx.plan->tp);
  const double T = ctx.tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double bpv = activation_bytes(ctx.training->precision);
  const bool sp = ctx.plan->sequence_parallel && ctx.plan->tp > 1;
  const double heads = static_cast<double>(m.num_attention_heads) / t;
  const double nope = static_cast<double>(mla.qk_nope_head_dim);
  const double rope = static_cast<double>(mla.qk_rope_head_dim);
  const double v = static_cast<double>(mla.v_head_dim);
  const double q_rank = static_cast<double>(mla.q_lora_rank);
  const double kv_rank = static_cast<double>(mla.kv_lora_rank);
  // With sequence parallelism the replicated down-projections read this rank's sequence
  // shard, and the latents are gathered after them ([s/tp, b, rank] outputs).
  const double rows = sp ? T / t : T;
  AttentionWidths widths;
  if (mla.q_lora_rank > 0) {
    add_linear(blk, "q down projection", ops, ctx, rows, q_rank, h);
    add_linear(blk, "q up projection", ops, ctx, T, heads * (nope + rope), q_rank);
    widths.entry = q_rank + kv_rank + rope;
  } else {
    add_linear(blk, "q projection", ops, ctx, T, heads * (nope + rope), h);
    widths.entry = h + kv_rank + rope;
  }
  add_linear(blk, "kv down projection", ops, ctx, rows, kv_rank + rope, h);
  add_linear(blk, "kv up projection", ops, ctx, T, heads * (nope + v), kv_rank);
  add_memory_op(blk, "latent norms", ops, ctx, 2 * bpv * rows * (q_rank + kv_rank));
  add_linear(blk, "attention output projection", ops, ctx, T, h, heads * v);
  widths.rotary = heads * rope + rope;
  return widths;
}

// The attention's projections: QKV and output (column- then row-parallel), or MLA's.
AttentionWidths add_attention_projections(BlockTimes& blk, const OpTime& ops,
                                          const CostContext& ctx) {
  const ModelSpec& m = *ctx.model;
  if (m.mla) return add_mla_projections(blk, ops, ctx);
  const double t = static_cast<double>(ctx.plan->tp);
  const double T = ctx.tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double qw = static_cast<double>(m.query_width());
  const double kvw = static_cast<double>(m.kv_width());
  add_linear(blk, "qkv projection", ops, ctx, T, (qw + 2 * kvw) / t, h);
  add_linear(blk, "attention output projection", ops, ctx, T, h, qw / t);
  return {(qw + kvw) / t, h};
}

// Norms, rotary embedding, bias+dropout+residual (two of each per layer); norms and residuals
// run on T/tp tokens with sequence parallelism.
void add_layer_kernels(BlockTimes& blk, const OpTime& ops, const CostContext& ctx,
                       double rotary_width) {
  const ModelSpec& m = *ctx.model;
  const FrameworkTraits& traits = ctx.traits;
  const double T = ctx.tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double bpv = activation_bytes(ctx.training->precision);
  const bool sp = ctx.plan->sequence_parallel && ctx.plan->tp > 1;
  const double rep = sp ? 1.0 / static_cast<double>(ctx.plan->tp) : 1.0;
  const double mask = model_uses_dropout(m) && traits.model_dropout ? 1.0 : 0.0;
  const bool rms = m.normalization == Normalization::RmsNorm;
  const double norm_elements = traits.norm_traffic_factor * bpv * T * h * rep;
  for (const char* norm : {"norm 1", "norm 2"}) {
    add_kernel_op(blk, norm, ops, ctx, 2 * norm_elements, 3 * norm_elements,
                  rms ? "rmsnorm_forward" : "layernorm_forward",
                  rms ? "rmsnorm_backward" : "layernorm_backward");
  }
  if (m.position_embedding == PositionEmbedding::Rotary) {
    add_memory_op(blk, "rotary embedding", ops, ctx,
                  traits.rope_traffic_factor * 2 * bpv * T * rotary_width);
  }
  add_kernel_op(blk, "residual (+dropout) after attention", ops, ctx,
                (3 * bpv + mask) * T * h * rep,
                kBackwardBytesFactor * (3 * bpv + mask) * T * h * rep, "add", "add");
  add_kernel_op(blk, "residual (+dropout) after MLP", ops, ctx, (3 * bpv + mask) * T * h * rep,
                kBackwardBytesFactor * (3 * bpv + mask) * T * h * rep, "add", "add");
}

// Tensor parallelism: two all-reduces of T x h per pass (Shoeybi et al. 2019), or with
// sequence parallelism an all-gather and a reduce-scatter of the same tensor each
// (Korthikanti et al. 2022 §4.2.2: same volume); the exposed part goes to tp_comm, the SMs
// the hidden part holds to compute.
void add_tp_comm(LayerTime& out, const CostContext& ctx, const BlockTimes& blk,
                 double attention_entry_width, bool moe_layer) {
  const ParallelPlan& p = *ctx.plan;
  if (p.tp <= 1) return;
  const double t = static_cast<double>(p.tp);
  const double T = ctx.tokens;
  const double h = static_cast<double>(ctx.model->hidden_size);
  const double bpv = activation_bytes(ctx.training->precision);
  const bool sp = p.sequence_parallel;
  const double bytes = bpv * T * h;
  const double entry_bytes = bpv * T * attention_entry_width;
  auto cost = [&](Collective op, double size) {
    return collective_cost(*ctx.node, op, ctx.tp_group, size).time_s;
  };
  // Per half (attention, MLP): with sequence parallelism an all-gather into the column-
  // parallel GEMMs and a reduce-scatter after the row-parallel one, in both passes; without
  // it an all-reduce after the row-parallel GEMM forward and one of the input gradient at
  // the column-parallel entry backward. A MoE layer with sequence parallelism hands its
  // sequence-sharded input straight to the token dispatcher (its all-to-all and expert-TP
  // gathers are expert communication, moe_layer_time), so only the attention half has the
  // dense TP pair.
  const double mlp_halves = moe_layer && sp ? 0.0 : 1.0;
  double forward_comm = 0;
  double backward_comm = 0;
  double gather_entry = 0;  // sequence parallel: all-gather into the attention entry
  double gather = 0;        // ... and into the MLP
  if (sp) {
    gather_entry = cost(Collective::AllGather, entry_bytes);
    gather = cost(Collective::AllGather, bytes);
    const double scatter = cost(Collective::ReduceScatter, bytes);
    forward_comm = gather_entry + scatter + mlp_halves * (gather + scatter);
    backward_comm = forward_comm;
  } else {
    forward_comm = (1.0 + mlp_halves) * cost(Collective::AllReduce, bytes);
    backward_comm =
        cost(Collective::AllReduce, entry_bytes) + mlp_halves * cost(Collective::AllReduce, bytes);
  }
  const bool tp_overlap = tp_comm_overlap_applies(ctx.traits, ctx.tp_group);
  if (tp_overlap) {
    out.forward.tp_comm = exposed(forward_comm, blk.forward_gemm, t);
    out.backward.tp_comm = exposed(backward_comm, blk.backward_wgrad + blk.backward_dgrad, t);
  } else {
    out.forward.tp_comm = forward_comm;
    out.backward.tp_comm = ctx.traits.tp_backward_overlap
                               ? std::max(backward_comm - blk.backward_wgrad, 0.0)
                               : backward_comm;
  }
  // The hidden part still holds SMs away from the GEMMs it overlaps.
  const double sm_share = comm_sm_fraction(ctx.node->gpu);
  out.forward.compute += sm_share * std::max(forward_comm - out.forward.tp_comm, 0.0);
  out.backward.compute += sm_share * std::max(backward_comm - out.backward.tp_comm, 0.0);
  if (sp && !tp_overlap) {
    // Sequence parallelism re-gathers each column-parallel input for its weight gradient,
    // overlapped with the input-gradient GEMM (Korthikanti et al. 2022 §4.2.3).
    const double regather = gather_entry + gather;
    out.backward.tp_comm += std::max(regather - blk.backward_dgrad, 0.0);
  }
}

// Context parallelism: ring exchange of this rank's K and V (cp - 1 steps), each step
// overlapped with the attention of the previous block; the backward pass moves K, V and
// their gradients (Liu et al. 2023 Ring Attention; Megatron-Core CP).
void add_cp_comm(LayerTime& out, const CostContext& ctx, const AttentionCore& core) {
  const ParallelPlan& p = *ctx.plan;
  if (p.cp <= 1) return;
  const double cp = static_cast<double>(p.cp);
  const double kv_bytes = 2 * activation_bytes(ctx.training->precision) * ctx.tokens *
                          static_cast<double>(ctx.model->kv_width()) / static_cast<double>(p.tp);
  const double step =
      collective_cost(*ctx.node, Collective::SendRecv, ctx.cp_group, kv_bytes).time_s;
  out.forward.cp_comm = (cp - 1) * std::max(step - core.forward / cp, 0.0);
  out.backward.cp_comm = (cp - 1) * std::max(2 * step - core.backward / cp, 0.0);
  const double sm_share = comm_sm_fraction(ctx.node->gpu);
  out.forward.compute += sm_share * ((cp - 1) * step - out.forward.cp_comm);
  out.backward.compute += sm_share * ((cp - 1) * 2 * step - out.backward.cp_comm);
}

// Recomputation before the backward pass: the whole forward (full), or the attention core and
// what selective recomputation redoes.
void add_recompute(LayerTime& out, const CostContext& ctx, const BlockTimes& blk,
                   const AttentionCore& core) {
  switch (ctx.plan->recompute) {
    case Recompute::Full:
      out.recompute = out.forward;
      out.executed_flops += out.model_flops / 3.0;
      break;
    case Recompute::Selective:
      if (ctx.plan->recompute_modules != 0) {
        // Megatron's listed modules (--recompute-modules); the attention core when listed.
        const bool core_attn = ctx.plan->recompute_modules & recompute_module::kCoreAttn;
        out.recompute.compute = (core_attn ? core.forward : 0.0) + blk.recompute_selective;
        out.executed_flops +=
            (core_attn ? core.executed_flops_forward : 0.0) + blk.recompute_selective_flops;
      } else if (ctx.traits.operator_level_selective_recompute) {
        // Every other matmul and the elementwise kernels are recomputed.
        out.recompute.compute = 0.5 * blk.forward_gemm + (blk.forward_compute - blk.forward_gemm);
        out.executed_flops += 0.5 * (blk.model_flops / 3.0);
      } else {
        out.recompute.compute = core.forward;
        out.executed_flops += core.executed_flops_forward;
      }
      break;
    case Recompute::None:
      break;
  }
}

// The attention half and the norm/residual kernels shared by dense and MoE layers, plus the
// tensor- and context-parallel communication; `mlp` adds the MLP-specific part.
LayerTime layer_time(const CostContext& ctx, const BlockTimes& mlp, bool moe_layer) {
  const OpTime ops{ctx, ctx.node->gpu, gemm_precision_of(*ctx.training)};
  BlockTimes blk = mlp;
  const AttentionWidths widths = add_attention_projections(blk, ops, ctx);
  add_adapters(blk, ops, ctx, moe_layer);
  add_layer_kernels(blk, ops, ctx, widths.rotary);

  const AttentionCore core = attention_core(ctx);
  record(
      ctx,
      ctx.traits.flash_attention || ctx.plan->cp > 1 ? "attention (flash)" : "attention (unfused)",
      "attention", core.executed_flops_forward, 0, core.forward, core.backward);
  LayerTime out;
  out.forward.compute = blk.forward_compute + core.forward;
  out.backward.compute = blk.backward_compute + core.backward;
  out.model_flops = blk.model_flops + 3 * core.model_flops_forward;
  out.executed_flops = blk.executed_flops + 3 * core.executed_flops_forward;
  out.backward_weight = blk.backward_wgrad + blk.adapter_wgrad;
  add_tp_comm(out, ctx, blk, widths.entry, moe_layer);
  add_cp_comm(out, ctx, core);
  add_recompute(out, ctx, blk, core);
  return out;
}

// Whether the backward pass runs the MoE block's forward again, token dispatch included.
bool recomputes_moe_block(const ParallelPlan& p) {
  return p.recompute == Recompute::Full ||
         (p.recompute == Recompute::Selective && (p.recompute_modules & recompute_module::kMoe));
}

// Every time of `blk` and of the ops recorded from `first_op` on, times `factor` (FLOPs stay).
void slow_down(BlockTimes& blk, const CostContext& ctx, std::size_t first_op, double factor) {
  for (double* t :
       {&blk.forward_compute, &blk.backward_compute, &blk.forward_gemm, &blk.backward_wgrad,
        &blk.adapter_wgrad, &blk.backward_dgrad, &blk.recompute_selective}) {
    *t *= factor;
  }
  if (ctx.ops_out == nullptr) return;
  for (std::size_t i = first_op; i < ctx.ops_out->size(); ++i) {
    (*ctx.ops_out)[i].forward_s *= factor;
    (*ctx.ops_out)[i].backward_s *= factor;
  }
}

// Expert-parallel communication of a MoE layer: token dispatch and combine, forward and
// again backward (an all-to-all of the dispatched tokens' top_k copies, h values each, or a
// deduplicating dispatcher's transfers: cost_models/moe_dispatch.h), hidden in part by the
// batch-level overlap or DualPipe; then the expert-TP group's gathers.
void add_ep_comm(LayerTime& out, const CostContext& ctx, const BlockTimes& mlp, double dispatched,
                 double expert_rows, bool etp_gather) {
  const ParallelPlan& p = *ctx.plan;
  const MoeSpec& moe = *ctx.model->moe;
  const double bpv = activation_bytes(ctx.training->precision);
  const double h = static_cast<double>(ctx.model->hidden_size);
  const double k = static_cast<double>(moe.top_k);
  if (p.ep > 1) {
    const double dispatch_s = ctx.moe_dispatcher == MoeDispatcher::AllToAll
                                  ? collective_cost(*ctx.node, Collective::AllToAll, ctx.ep_group,
                                                    bpv * dispatched * k * h)
                                        .time_s
                                  : dedup_dispatch_time_s(*ctx.node, ctx.ep_group, dispatched,
                                                          bpv * h, moe.num_experts, moe.top_k);
    const double a2a = dispatch_s / ctx.moe_throughput_fraction;
    if (p.moe_a2a_overlap) {
      // Batch-level overlap (Megatron's combined 1F1B): each all-to-all hides under the paired
      // micro-batch's computation of the other phase, except in the fill and drain chunks that
      // have no partner; the hidden part slows the computation beside it.
      const MoeLayerCompute compute{out.forward.compute - mlp.forward_compute, mlp.forward_compute,
                                    out.backward.compute - mlp.backward_compute,
                                    mlp.backward_compute};
      const ExposedA2a exposed_a2a = overlapped_a2a_exposure(compute, a2a);
      const double slowdown = overlapped_dispatch_compute_cost(ctx.node->gpu, ctx.moe_dispatcher);
      PairedA2a& paired = out.paired_a2a;
      paired.hidden_forward = 2 * a2a - exposed_a2a.forward;
      paired.hidden_backward = 2 * a2a - exposed_a2a.backward;
      paired.compute_cost_forward = slowdown * paired.hidden_forward;
      paired.compute_cost_backward = slowdown * paired.hidden_backward;
      out.forward.ep_comm = exposed_a2a.forward;
      out.backward.ep_comm = exposed_a2a.backward;
      out.forward.compute += paired.compute_cost_forward;
      out.backward.compute += paired.compute_cost_backward;
    } else {
      out.forward.ep_comm = 2 * a2a;
      out.backward.ep_comm = 2 * a2a;
    }
    if (recomputes_moe_block(p)) out.recompute.ep_comm = 2 * a2a;
  }
  if (etp_gather) {
    // The expert-TP group gathers the received tokens before the experts and reduce-scatters
    // their outputs (the expert rows, h values), forward and backward.
    const double rows_bytes = bpv * expert_rows * h;
    const double gather =
        (collective_cost(*ctx.node, Collective::AllGather, ctx.etp_group, rows_bytes).time_s +
         collective_cost(*ctx.node, Collective::ReduceScatter, ctx.etp_group, rows_bytes).time_s) /
        ctx.moe_throughput_fraction;
    out.forward.ep_comm += gather;
    out.backward.ep_comm += gather;
    if (recomputes_moe_block(p)) out.recompute.ep_comm += gather;
  }
  if (p.ep > 1 && p.schedule == ScheduleKind::DualPipe) {
    // DualPipe (DeepSeek-V3 report §3.2.1) runs one micro-batch's forward beside another's
    // backward so that the dispatch/combine all-to-alls hide under the other chunk's compute;
    // only what exceeds that compute stays exposed; the hidden part slows that compute as the
    // dispatcher's kernels do (DeepSeek's own kernels take about 20 SMs, §3.2.2, as DeepEP).
    const double sm_share = overlapped_dispatch_compute_cost(ctx.node->gpu, ctx.moe_dispatcher);
    const double hidden_f = std::min(out.forward.ep_comm, out.backward.compute);
    const double hidden_b = std::min(out.backward.ep_comm, out.forward.compute);
    out.forward.ep_comm -= hidden_f;
    out.backward.ep_comm -= hidden_b;
    out.forward.compute += sm_share * hidden_f;
    out.backward.compute += sm_share * hidden_b;
  }
}

}  // namespace

LayerTime dense_layer_time(const CostContext& ctx) {
  const ModelSpec& m = *ctx.model;
  const ParallelPlan& p = *ctx.plan;
  const OpTime ops{ctx, ctx.node->gpu, gemm_precision_of(*ctx.training)};
  const double t = static_cast<double>(p.tp);
  const double T = ctx.tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double bpv = activation_bytes(ctx.training->precision);
  const bool swiglu = m.activation == Activation::Swiglu;
  BlockTimes mlp;
  add_linear(mlp, "mlp fc1", ops, ctx, T, (swiglu ? 2 * f : f) / t, h);
  add_linear(mlp, "mlp fc2", ops, ctx, T, h, f / t);
  {
    // GELU: read x, write y; backward read x and dy, write dx. SwiGLU: read gate and up,
    // write y; backward read gate, up and dy, write both gradients.
    const double out = ctx.traits.activation_traffic_factor * bpv * T * f / t;
    add_kernel_op(mlp, "mlp activation", ops, ctx, (swiglu ? 3 : 2) * out, (swiglu ? 5 : 3) * out,
                  swiglu ? "swiglu_forward" : "gelu_forward",
                  swiglu ? "swiglu_backward" : "gelu_backward");
  }
  return layer_time(ctx, mlp, false);
}

LayerTime moe_layer_time(const CostContext& ctx) {
  const ModelSpec& m = *ctx.model;
  const MoeSpec& moe = *m.moe;
  const ParallelPlan& p = *ctx.plan;
  const OpTime ops{ctx, ctx.node->gpu, gemm_precision_of(*ctx.training)};
  const double t = static_cast<double>(p.tp);
  const double etp = static_cast<double>(p.expert_tp());
  const double T = ctx.tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double fe = static_cast<double>(moe.expert_ffn_hidden_size);
  const double bpv = activation_bytes(ctx.training->precision);
  const bool swiglu = m.activation == Activation::Swiglu;
  const double k = static_cast<double>(moe.top_k);
  const double local_experts = static_cast<double>(moe.num_experts) / static_cast<double>(p.ep);
  // The tokens this GPU dispatches and the rows its experts receive (cost_models/expert_rows.h),
  // times the imbalance allowance, split evenly over its experts: grouped GEMMs of smaller M.
  const ExpertRows rows = cost::expert_rows(T, p.tp, p.expert_tp(), p.sequence_parallel, moe.top_k);
  const double dispatched = rows.dispatched;
  const bool etp_gather = rows.etp_gather;
  const double expert_rows = rows.rows;
  const double routed = expert_rows * kExpertImbalance;
  const double per_expert = routed / local_experts;

  // The local experts' GEMMs run as grouped GEMMs (one launch per projection, the experts'
  // tiles scheduled together: Megatron-Core --moe-grouped-gemm, TE GroupedLinear), and their
  // activation as one kernel over all received rows.
  const std::size_t first_op = ctx.ops_out != nullptr ? ctx.ops_out->size() : 0;
  BlockTimes mlp;
  add_linear(mlp, "expert fc1 (grouped)", ops, ctx, per_expert, (swiglu ? 2 * fe : fe) / etp, h,
             local_experts);
  add_linear(mlp, "expert fc2 (grouped)", ops, ctx, per_expert, h, fe / etp, local_experts);
  add_memory_op(mlp, "expert activation", ops, ctx, (swiglu ? 3 : 2) * bpv * routed * fe / etp);
  // Model FLOPs count the balanced rows only (the imbalance allowance is not useful work), and
  // each token's expert work once: without sequence parallelism every tensor-parallel rank
  // holds all T tokens, so experts narrower than tp (expert tp < tp) repeat the work tp/etp
  // times (an expert-TP group wider than tp gathers other ranks' tokens: no repeat). Model FLOPs
  // are a property of the model and the tokens, never of the plan.
  mlp.model_flops /= kExpertImbalance * rows.expert_work_copies;
  if (moe.shared_expert_ffn_hidden_size > 0) {
    const double fs = static_cast<double>(moe.shared_expert_ffn_hidden_size);
    add_linear(mlp, "shared expert fc1", ops, ctx, T, (swiglu ? 2 * fs : fs) / t, h);
    add_linear(mlp, "shared expert fc2", ops, ctx, T, h, fs / t);
    add_memory_op(mlp, "shared expert activation", ops, ctx, (swiglu ? 3 : 2) * bpv * T * fs / t);
  }
  // Router: a small GEMM over all experts, then softmax and top-k over the dispatched tokens'
  // fp32 scores.
  // Without sequence parallelism every tensor-parallel rank routes all T tokens: the router's
  // model FLOPs count once.
  const double flops_before_router = mlp.model_flops;
  add_linear(mlp, "router", ops, ctx, dispatched, static_cast<double>(moe.num_experts), h);
  mlp.model_flops =
      flops_before_router + (mlp.model_flops - flops_before_router) / rows.routing_copies;
  add_memory_op(mlp, "router softmax/top-k", ops, ctx,
                3 * 4.0 * dispatched * static_cast<double>(moe.num_experts));
  // Megatron-Core's all-to-all dispatcher copies the routed tokens four times: permute by
  // expert and unpermute with the routing weights (the dispatched rows), and sort the received
  // chunks by local expert and back (the expert rows); with one local expert the two chunk
  // sorts disappear (token_dispatcher.py MoEAlltoAllTokenDispatcher). DeepEP's dispatch kernel
  // reads each token where it lies and its combine kernel sums the returned rows, so only the
  // receiver's permutation into local-expert order (carrying the routing weights to the
  // experts) and back remain: two copies of the expert rows
  // (_DeepepManager.get_permuted_hidden_states_by_experts and
  // get_restored_hidden_states_by_experts). HybridEP runs "permute + dispatch a2a + permute"
  // inside its dispatch (fused_a2a.py hybrid_ep_dispatch): the all-to-all's copies.
  const bool deepep = p.ep > 1 && ctx.moe_dispatcher == MoeDispatcher::DeepEP;
  const double permuted_rows =
      deepep ? 2 * expert_rows : 2 * dispatched * k + (local_experts > 1 ? 2 * expert_rows : 0.0);
  add_memory_op(mlp, "token permutation", ops, ctx, 2 * bpv * permuted_rows * h);
  slow_down(mlp, ctx, first_op, 1.0 / ctx.moe_throughput_fraction);

  LayerTime out = layer_time(ctx, mlp, true);
  add_ep_comm(out, ctx, mlp, dispatched, expert_rows, etp_gather);
  return out;
}

LayerTime embedding_time(const CostContext& ctx) {
  const ModelSpec& m = *ctx.model;
  const OpTime ops{ctx, ctx.node->gpu, gemm_precision_of(*ctx.training)};
  const double bpv = activation_bytes(ctx.training->precision);
  const double rows = ctx.tokens * static_cast<double>(m.hidden_size);
  LayerTime out;
  // Gather rows (+ position embeddings), then the gradient scatter-add backward.
  out.forward.compute = ops.memory(2 * bpv * rows);
  // The gradient scatter-add, unless the embedding is frozen (LoRA): a weight gradient only.
  out.backward.compute = frozen_weights(ctx) ? 0.0 : ops.memory(3 * 4.0 * rows);
  out.backward_weight = out.backward.compute;
  return out;
}

LayerTime output_layer_time(const CostContext& ctx) {
  const ModelSpec& m = *ctx.model;
  const ParallelPlan& p = *ctx.plan;
  const OpTime ops{ctx, ctx.node->gpu, gemm_precision_of(*ctx.training)};
  const double t = static_cast<double>(p.tp);
  const double T = ctx.tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double vocab = static_cast<double>(m.vocab_size) / t;
  const double bpv = activation_bytes(ctx.training->precision);
  BlockTimes blk;
  add_memory_op(blk, "final norm", ops, ctx, 2 * bpv * T * h);
  // The output GEMM runs in 16-bit even in fp8 recipes (Transformer Engine keeps the first
  // and last layers in higher precision).
  const OpTime wide{ctx, ctx.node->gpu, attention_precision_of(*ctx.training)};
  add_linear(blk, "output layer", wide, ctx, T, vocab, h);
  // Cross entropy: read the logits, softmax in fp32, write the gradient.
  const double logits = T * vocab;
  blk.forward_compute += ops.memory((bpv + 4 + 4) * logits);
  blk.backward_compute += ops.memory((4 + 4 + bpv) * logits);
  LayerTime out;
  out.forward.compute = blk.forward_compute;
  out.backward.compute = blk.backward_compute;
  out.backward_weight = blk.backward_wgrad;
  out.model_flops = blk.model_flops;
  out.executed_flops = blk.executed_flops;
  if (p.recompute == Recompute::Full) out.recompute.compute = 0;  // the head is not recomputed
  return out;
}

ExplainedLayer explain_layer(const Job& job, bool moe) {
  ExplainedLayer out;
  CostContext ctx = CostContext::make(job, job.cluster.node);
  ctx.ops_out = &out.ops;
  out.time = moe ? moe_layer_time(ctx) : dense_layer_time(ctx);
  out.tokens = ctx.tokens;
  return out;
}

}  // namespace parplan::cost
