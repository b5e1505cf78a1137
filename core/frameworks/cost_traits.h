// FrameworkTraits: what a training framework implies for cost, as plain data (kernels,
// overlapped communication, bytes per parameter, memory beside the model). Each value is a
// documented property of the software, cited here and in core/frameworks/<name>.cpp; none is
// fitted to a run. The cost models read them through cost::framework_traits. Tested in
// tests/core/frameworks_test.cpp and tests/cost_models/framework_traits_test.cpp.
#pragma once

namespace parplan {

// A fused Adam step (Apex/TE FusedAdam, torch fused AdamW) per parameter: read the fp32
// gradient (4), read and write the fp32 master weight (8) and both moments (16), write the
// 16-bit weight copy (2), plus the gradient-norm read (4): 34 bytes.
inline constexpr double kFusedAdamStepBytesPerParam = 34;

struct FrameworkTraits {
  // Kernels.
  bool flash_attention = true;    // attention without the s^2 score matrix in memory
  bool fused_elementwise = true;  // bias+activation, dropout+residual+norm fused kernels
  // The flash-attention kernel is written for the GPU's own architecture (cuDNN / Transformer
  // Engine fused attention, FlashAttention-3 on Hopper). FlashAttention-2-era kernels reach
  // about half of that on Hopper and later (Shah et al. 2024, FlashAttention-3, §1: FA2
  // "achieves only 35% utilization on H100" vs 75% for FA3).
  bool attention_kernel_native = true;
  // The flash-attention kernel follows FlashAttention-1's design (one thread block per
  // (batch, head), more non-matmul work per block), which reaches 25-40% of A100's peak where
  // FlashAttention-2 reaches 50-73% (Dao 2023, arXiv 2307.08691, §1). llm-foundry's
  // attn_impl 'triton' (flash_attn_triton on triton_pre_mlir, the default of its benchmark
  // scripts) is such a kernel.
  bool attention_kernel_fa1_design = false;
  // Whether the model's dropout layers exist in this software (GPT-style models keep them;
  // parplan's executor has none).
  bool model_dropout = true;
  // Memory traffic of unfused (PyTorch eager) elementwise code relative to one fused kernel:
  // RMSNorm as float/pow/mean/rsqrt/mul/type_as/mul passes (~36 vs 4 bytes per element),
  // rotary embedding through complex views in fp32 (~20 vs 4), SwiGLU as silu then mul
  // (10 vs 6). 1 = fused kernels.
  double norm_traffic_factor = 1.0;
  double rope_traffic_factor = 1.0;
  double activation_traffic_factor = 1.0;
  // The framework runs eager PyTorch modules that training.torch_compile compiles (the
  // factors above then return to 1); false where its kernels are fused already.
  bool eager_modules_compilable = false;
  // Bandwidth of the framework's memory-bound kernels (norms, activations, casts, residual
  // adds, rotary, softmax, cross entropy) as a fraction of the GPU's streaming (STREAM/copy)
  // bandwidth, where no measured kernel of that kind is known. Such kernels reduce along rows,
  // convert precisions, transpose (fp8 cast_transpose) and run at moderate sizes, so they stay
  // below a copy: on H100, production kernels (torch.compile-generated Triton, Liger) move
  // about 2.0 TB/s of model bytes where a copy and speed-of-light hand-written kernels reach
  // 3.0 TB/s (Guo, Zadouri, Dao 2025, "Getting Memory-bound Kernels to Speed-of-Light",
  // Dao-AILab/quack media/2025-07-10-membound-sol.md, "Memory throughput"): 2.0 / 3.0 ~ 0.7.
  double memory_kernel_bandwidth_fraction = 0.7;
  // Communication overlapped with compute.
  bool overlap_dp_grad_reduce = true;  // bucketed gradient reduction during backward
  bool overlap_param_gather = true;    // ZeRO-1/2 weight all-gather under the next forward
  // The data-parallel gradient reduction and the ZeRO-1/2 weight all-gather run in buckets of
  // max(dp_bucket_params, dp_bucket_params_per_rank * ranks) parameters per model chunk, one
  // collective each (each paying the ring's latency over the group); 0: one collective over
  // the chunk's whole gradient buffer. The defaults are Megatron-Core's
  // (distributed/distributed_data_parallel.py: bucket_size = max(40000000, 1000000 * dp)),
  // which buckets only the first pipeline stage's first model chunk ("Turn off bucketing if we
  // are on a pipeline stage that is not the first"; training.py disables it for the chunks
  // after the first): the others reduce their buffer in one collective.
  double dp_bucket_params = 40e6;
  double dp_bucket_params_per_rank = 1e6;
  bool dp_bucket_first_chunk_only = true;
  // FSDP reduces a sharded model's gradients (ZeRO 2 and 3 reaching the data-parallel update)
  // in one collective per FSDP unit, a transformer block, rather than in DDP buckets.
  bool dp_collectives_per_layer_when_sharded = false;
  // FSDP's backward prefetch issues the next layer's all-gather only after the current
  // layer's gradients are computed (PyTorch BackwardPrefetch.BACKWARD_POST: it "overlaps the
  // current reduce-scatter and the next gradient computation"), so the backward gathers are
  // exposed. Composer, under llm-foundry, defaults to it (fsdp_config backward_prefetch:
  // 'BACKWARD_POST'); FSDP2 and DeepSpeed prefetch before the gradient computation.
  bool fsdp_backward_prefetch_post = false;
  // ZeRO-3 moves parameters and gradients in buckets of at most this many parameters, one
  // collective each (0: one collective per layer, as FSDP wraps each transformer block).
  double fsdp_gather_bucket_params = 0;
  double fsdp_reduce_bucket_params = 0;
  // ZeRO-3's fetch blocks the device (DeepSpeed 2021): each gather waits for everything in
  // flight, so no gather or gradient reduce-scatter hides under compute (step_model.cpp).
  bool zero3_fetch_blocks = false;
  // ZeRO-3 keeps a module's gathered weights after its forward when their next use is at most
  // this many parameters away (DeepSpeed stage3_max_reuse_distance); 0: always releases.
  double zero3_max_reuse_distance_params = 0;
  bool tp_comm_overlap = false;  // tensor-parallel collectives hidden under GEMMs
  // MoE token dispatch with the "auto" dispatcher: a deduplicating dispatcher (DeepEP) when
  // the expert-parallel group leaves the node's NVLink domain, else the NCCL all-to-all
  // (cost_models/moe_dispatch.h).
  bool moe_dedup_dispatch_across_nodes = false;
  // Backward input-gradient all-reduce overlapped with the weight-gradient GEMM
  // (Megatron async_tensor_model_parallel_allreduce, 2021+).
  bool tp_backward_overlap = true;
  bool pp_scatter_gather = true;  // p2p sends 1/tp of the activation, all-gathered after
  // The distributed optimizer all-gathers the updated parameters through the contiguous grad
  // buffer, in the gradients' dtype (fp32 for bf16 training), rather than in a 16-bit param
  // buffer (Megatron-LM before Megatron-Core, docs/distrib_optimizer.md: "The grad buffer is
  // used for performing reduce-scatter and all-gather operations").
  bool param_gather_in_grad_dtype = false;
  // Pipeline sends and receives block the stage until the transfer is done, so every send is
  // on the stage's own timeline (Megatron-LM's p2p_communication before Megatron-Core:
  // batch_isend_irecv, then req.wait() and torch.cuda.synchronize() "to protect against race
  // condition"; DeepSpeed's PipelineEngine sends with blocking dist.send). Megatron-Core
  // overlaps them under the interleaved schedule (overlap_p2p_comm; the next trait); MegaScale
  // measures the difference: +2.5 MFU points from pipeline overlap over Megatron-LM (Jiang et al.
  // 2024, Table 3).
  bool pipeline_p2p_blocking = false;
  // Megatron-Core overlaps pipeline sends with compute only under the interleaved schedule:
  // without virtual stages, Megatron-LM turns overlap_p2p_comm off ("Overlap P2P
  // communication is disabled if not using the interleaved schedule",
  // megatron/training/arguments.py) and Megatron-Bridge selects it only for pp > 1 and
  // vpp > 1 (training/comm_overlap.py); the 1F1B schedule then sends with batch_isend_irecv,
  // waits on every request and synchronises the device (p2p_communication.py _communicate,
  // batch_p2p_sync), so each send is on the stage's own timeline.
  bool pipeline_p2p_blocking_without_interleaving = false;
  bool cp_shards_optimizer = true;  // distributed optimizer shards over dp*cp
  // Bytes per parameter (Megatron-LM docs/source/distrib_optimizer.md table; Rajbhandari et
  // al. 2020 "ZeRO" §3 for DeepSpeed; torchtitan FSDP2 keeps fp32 sharded parameters).
  double weight_bytes = 2;       // working copy of the weights
  double grad_bytes = 4;         // gradient buffer
  double optimizer_bytes = 12;   // master weights + Adam moments (+ fp32 grad copy for fp16)
  double grad_reduce_bytes = 2;  // bytes per gradient element on the wire
  // Memory traffic of the optimizer step per parameter (kFusedAdamStepBytesPerParam for a
  // fused Adam kernel).
  double optimizer_step_bytes_per_param = kFusedAdamStepBytesPerParam;
  // A 16-bit .grad kept beside the fp32 gradient buffer for the whole step, bytes per
  // parameter (DeepSpeed BF16_Optimizer under the pipeline engine: every micro-batch's bf16
  // gradients are added into the full fp32 buffer with update_hp_grads(clear_lp_grads=False),
  // so both copies stay allocated until the optimizer step).
  double low_precision_grad_copy_bytes = 0;
  // Memory traffic per parameter and micro-batch to add the 16-bit gradients of that
  // micro-batch into an fp32 gradient buffer outside autograd (DeepSpeed BF16_Optimizer
  // update_hp_grads after every micro-batch's backward: read 2 bytes, read and write 4).
  double grad_accumulation_bytes_per_micro_batch = 0;
  // fp8 training keeps cached fp8 copies of the weights (Transformer Engine: the weight and
  // its transpose, 1 byte each, refreshed once per step), bytes per parameter.
  double fp8_weight_copy_bytes = 0;
  // With a sharded optimizer (cost::fp8_params_kept), the fp8 recipes keep the parameters
  // themselves in fp8, so the fp8 data the GEMMs read (1 + 1 bytes: the value and its transpose
  // under per-tensor scaling, all-gathered in fp8; the row- and column-wise MXFP8 data on
  // Blackwell, plus 1/32 for its scales) replaces the 16-bit weights and their copies.
  // Megatron-Bridge mixed_precision.py sets fp8_param_gather=True for the delayed, tensorwise
  // and MXFP8 recipes (every tag v0.1.0rc3 to v0.6.0); MXFP8 adds
  // reuse_grad_buf_for_mxfp8_param_ag=True: its parameters are gathered in bf16 through the
  // gradient buffer, with no 16-bit parameter buffer (Megatron-Core optimizer_config.py warns
  // that MXFP8 without the two "will use significant amount additional GPU memory").
  bool fp8_params = false;
  // fp8 GEMMs save their fp8-cast inputs for the backward pass (Transformer Engine), so
  // those activations take 1 byte instead of 2; torchao's Float8Linear keeps the 16-bit input.
  bool fp8_saves_gemm_inputs = false;
  // Bytes per logit element alive at the loss: 16-bit logits + an fp32 copy with the
  // softmax computed in place (Megatron vocab-parallel cross entropy: 2 + 4), or PyTorch's
  // cross_entropy on logits.float(): 16-bit logits + fp32 copy + fp32 log-softmax (2 + 4 + 4).
  double logits_bytes_per_element = 6;
  // The MoE combine weights each expert's output by its router probability, so the weighted
  // outputs (top_k copies of every token, 16-bit) are kept for the probabilities' gradient
  // (GShard-style combine: DeepSpeed-MoE, torchtitan's scatter of score-weighted outputs).
  // Megatron-Core applies the probabilities inside the expert activation instead (Megatron-LM
  // PR 2668, "Memory efficient token permutation", core_v0.13.0: weighted_bias_swiglu_impl
  // multiplies by permuted_probs), and its combine is an unweighted unpermute that saves
  // nothing. This is the fused activation path (bias_activation_fusion, the recipes'
  // setting); the unfused one keeps the unweighted activation output instead.
  bool moe_combine_keeps_expert_outputs = true;
  // Selective recomputation means operator-level checkpointing (torchtitan "op" SAC: every
  // other matmul output kept) rather than Megatron's attention-core recomputation.
  bool operator_level_selective_recompute = false;
  // With pipelining, FSDP keeps the stage's parameters gathered and its gradients unsharded
  // across the micro-batches of a step (torchtitan: reshard_after_forward off and gradient
  // sync deferred to the last micro-batch when PP is on), gathering and reduce-scattering
  // once per step instead of once per micro-batch.
  bool fsdp_unsharded_with_pp = false;
  // Pipeline engines that keep send/receive buffers per in-flight micro-batch (DeepSpeed
  // PipelineEngine pipe_buffers: the stage's input and output activations).
  bool pipe_buffers_per_micro_batch = false;
  // Framework memory beside the model (allocator reserve, workspaces, communication buffers).
  double workspace_gib = 1.0;
  // Fraction of the memory the allocator reserves for per-step tensors (activations,
  // backward transients, logits) that is free but unusable at the peak. PyTorch's caching
  // allocator splits cached blocks, and the irregular lifetimes of recomputation, pipelining
  // and collectives leave about 15% of the reserved pool fragmented in LLM training (GMLake,
  // Guo et al. ASPLOS 2024, arXiv 2401.08156: 15% on average, up to 33%, over eight LLMs on
  // A100-80GB). Persistent buffers (weights, gradients, optimizer state) are allocated once.
  double allocator_fragmentation = 0.15;
  // Whether the framework allocates through PyTorch's CUDA caching allocator, which
  // training.expandable_segments configures (not XLA's, nor parplan's own executor).
  bool pytorch_caching_allocator = true;
  // Resolved for the job (cost_models/framework_traits.cpp): the allocator runs with
  // expandable segments, so the fragmentation reserve goes (cost_models/memory_model.cpp).
  bool expandable_segments = false;
};

}  // namespace parplan
