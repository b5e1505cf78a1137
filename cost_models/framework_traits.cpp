#include "cost_models/framework_traits.h"

#include "core/frameworks/mixed_precision.h"

namespace parplan::cost {

bool fp8_recipe_is_mxfp8(const GpuSpec& gpu) { return gpu.architecture == "blackwell"; }

bool fp8_params_apply(const FrameworkTraits& traits, const GpuSpec& gpu) {
  return traits.fp8_params && !fp8_recipe_is_mxfp8(gpu);
}

bool tp_comm_overlap_applies(const FrameworkTraits& traits, const GroupPlacement& tp_group) {
  return traits.tp_comm_overlap && !tp_group.crosses_nodes();
}

FrameworkTraits framework_traits(Framework framework, const TrainingSpec& training,
                                 const ParallelPlan& plan) {
  FrameworkTraits t;
  switch (framework) {
    case Framework::MegatronCore:
      // Megatron-Core with Transformer Engine: cuDNN/flash fused attention, overlapped
      // gradient reduce-scatter and parameter all-gather (distributed optimizer),
      // userbuffer TP overlap (NeMo performance recipes: tp_comm_overlap=True).
      megatron_mixed_precision(t, training.precision);
      t.tp_comm_overlap = true;
      if (training.precision == Precision::Fp8) {
        t.fp8_weight_copy_bytes = 2;
        t.fp8_params = true;
        t.fp8_saves_gemm_inputs = true;
      }
      break;
    case Framework::MegatronLm:
      // Megatron-LM 2020-2021 (Shoeybi et al. 2019; Narayanan et al. 2021): fused
      // scale-mask-softmax over the full score matrix, gradient all-reduce after backward.
      megatron_mixed_precision(t, training.precision);
      t.flash_attention = false;
      t.overlap_dp_grad_reduce = false;
      t.overlap_param_gather = false;
      t.cp_shards_optimizer = false;
      t.tp_backward_overlap = false;
      t.pipeline_p2p_blocking = true;
      t.param_gather_in_grad_dtype = true;
      break;
    case Framework::MegatronDeepspeed:
      // Megatron-DeepSpeed (BLOOM, MT-NLG, 2021-2022): Megatron kernels without flash
      // attention; the DeepSpeed pipeline engine reduces gradients after the pipeline flush.
      megatron_mixed_precision(t, training.precision);
      t.flash_attention = false;
      t.overlap_dp_grad_reduce = false;
      t.overlap_param_gather = false;
      t.cp_shards_optimizer = false;
      t.tp_backward_overlap = false;
      t.pipe_buffers_per_micro_batch = true;
      t.pipeline_p2p_blocking = true;
      // bf16 goes through DeepSpeed's BF16_Optimizer: fp32 gradients for every parameter plus
      // the bf16 .grad it does not free between micro-batches (deepspeed/runtime/pipe/
      // engine.py _exec_backward_pass: update_hp_grads(clear_lp_grads=False)).
      if (training.precision == Precision::Bf16) {
        t.low_precision_grad_copy_bytes = 2;
        t.grad_accumulation_bytes_per_micro_batch = 2 + 4 + 4;
      }
      // DeepSpeed's gradient reduction bucket (reduce_bucket_size 5e8 elements, fp32 in the
      // bf16 optimizer: 1.9 GiB) beside the CUDA context, cuBLAS and NCCL buffers.
      t.workspace_gib = 1.0 + 1.9;
      break;
    case Framework::Deepspeed:
      // DeepSpeed ZeRO (Rajbhandari et al. 2020): 2 + 2 + 12 bytes/param, overlap_comm and
      // parameter prefetch; 2021-era kernels without flash attention.
      t.weight_bytes = 2;
      t.grad_bytes = training.precision == Precision::Fp16 ? 2 : 4;
      t.optimizer_bytes = 12;
      t.grad_reduce_bytes = 2;
      t.flash_attention = false;
      t.pp_scatter_gather = false;
      t.cp_shards_optimizer = false;
      t.pipe_buffers_per_micro_batch = true;
      t.pipeline_p2p_blocking = true;
      t.workspace_gib = 1.0 + 1.9;  // reduce/all-gather buckets (5e8 elements)
      break;
    case Framework::Torchtitan:
      // torchtitan: FSDP2, SDPA flash attention, operator-level selective checkpointing,
      // loss = cross_entropy(pred.flatten(0, 1).float(), labels).
      fsdp_mixed_precision(t);
      t.pp_scatter_gather = false;
      t.logits_bytes_per_element = 10;
      t.operator_level_selective_recompute = true;
      t.fsdp_unsharded_with_pp = true;
      t.attention_kernel_native = false;  // PyTorch SDPA flash backend (FlashAttention-2)
      // DTensor tensor parallelism over plain nn.Linear: autograd computes a linear's input
      // and weight gradients in one node and only then runs the redistribution collective, so
      // nothing hides the backward TP communication (Megatron's
      // LinearWithGradAccumulationAndAsyncCommunication issues it before the weight-gradient
      // GEMM); async TP is a separate opt-in (tp_comm_overlap).
      t.tp_backward_overlap = false;
      // Eager PyTorch modules (torch.compile is off by default in torchtitan).
      t.norm_traffic_factor = 9.0;
      t.rope_traffic_factor = 5.0;
      t.activation_traffic_factor = 1.7;
      break;
    case Framework::LlmFoundry:
      // llm-foundry: PyTorch FSDP; fp8 through Transformer Engine layers (fc_type: te,
      // scripts/train/benchmarking/submit_benchmarks.py). Its benchmark scripts run
      // attn_impl 'triton' (submit_benchmarks.py default): flash_attn_triton, Tri Dao's
      // FlashAttention-1-design Triton kernel on triton_pre_mlir, "only tested on A100"
      // (llm_foundry/models/layers/flash_attn_triton.py header). The default loss is
      // flash-attn's fused cross entropy (loss_fn: fused_crossentropy), which reads the 16-bit
      // logits and writes their gradient in place: 2 bytes per logit.
      fsdp_mixed_precision(t);
      t.fp8_saves_gemm_inputs = training.precision == Precision::Fp8;
      t.pp_scatter_gather = false;
      t.logits_bytes_per_element = 2;
      t.attention_kernel_native = false;
      t.attention_kernel_fa1_design = true;
      t.fsdp_backward_prefetch_post = true;  // Composer's FSDP default
      // MPT, its model, defaults to no dropout anywhere (MPTConfig: emb_pdrop, resid_pdrop
      // and attn_config.attn_pdrop all 0.0).
      t.model_dropout = false;
      // Composer's DecoupledAdamW runs one PyTorch kernel per elementwise op and parameter
      // (composer/optim/decoupled_weight_decay.py: param.mul_, exp_avg.mul_().add_(),
      // exp_avg_sq.mul_().addcmul_(), sqrt, div, add_, param.addcdiv_): 88 bytes per fp32
      // parameter; norm gradient clipping (the MPT yamls' gradient_clipping) reads the
      // gradients and scales them in place: 12 more.
      t.optimizer_step_bytes_per_param = 100;
      break;
    case Framework::Maxtext:
      fsdp_mixed_precision(t);
      t.pp_scatter_gather = false;
      // XLA assigns buffers at compile time from the whole program's lifetimes (no caching
      // allocator splitting blocks at run time): little fragmentation.
      t.allocator_fragmentation = 0.05;
      break;
    case Framework::Other:
      megatron_mixed_precision(t, training.precision);
      break;
    case Framework::Parplan:
      // parplan's executor (executor/): the job's precision as storage (fp32 weights,
      // gradients and AdamW moments: 4 + 4 + 8 bytes), flash-style attention memory (log-sum-
      // exp kept), blocking collectives that overlap nothing, no dropout, its own allocation
      // tracking (no CUDA context or allocator reserve counted).
      t.weight_bytes = activation_bytes(training.precision);
      t.grad_bytes = t.weight_bytes;
      t.optimizer_bytes = 2 * t.weight_bytes;
      t.grad_reduce_bytes = t.weight_bytes;
      t.overlap_dp_grad_reduce = false;
      t.overlap_param_gather = false;
      t.tp_backward_overlap = false;
      t.cp_shards_optimizer = false;
      t.model_dropout = false;
      t.logits_bytes_per_element = 2 * activation_bytes(training.precision);
      t.workspace_gib = 0;
      t.allocator_fragmentation = 0;
      // Its kernels are measured by `parplan profile` (kernel_gbps); the rest stream.
      t.memory_kernel_bandwidth_fraction = 1.0;
      break;
  }
  (void)plan;
  return t;
}

}  // namespace parplan::cost
