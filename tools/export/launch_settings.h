// Launch settings for a job's plan in the training frameworks' own spellings: Megatron-LM
// command-line flags (megatron/training/arguments.py), a Megatron-Bridge ConfigContainer
// override (YAML) and a torchtitan v0.2.2 TOML job config. A plan the framework cannot run is
// refused (export_refusal: `parplan export` exits 2 naming the key and the nearest plan it
// can run).
// Tested in tests/tools/export_test.cpp: every printed flag or key is in the documented lists
// tests/data/export/{megatron,nemo,torchtitan}_flags.txt.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/job.h"

namespace parplan::tools {

enum class ExportFormat { Megatron, Nemo, Torchtitan };

std::optional<ExportFormat> parse_export_format(std::string_view name);
// "Megatron-LM", "Megatron-Bridge" or "torchtitan".
const char* framework_title(ExportFormat format);

// A plan or model key the target framework cannot run, by that framework's own argument
// checks: what was found, what the framework supports, and the nearest plan it runs (when
// changing one plan key gets there).
struct ExportRefusal {
  std::string key;        // "plan.schedule"
  std::string found;      // "zero-bubble"
  std::string supported;  // "1f1b, or interleaved with vpp > 1"
  std::optional<ParallelPlan> nearest;
  std::string nearest_change;  // "plan.schedule 1f1b"
};
std::optional<ExportRefusal> export_refusal(const Job& job, ExportFormat format);
std::optional<ExportRefusal> megatron_refusal(const Job& job);
std::optional<ExportRefusal> torchtitan_refusal(const Job& job);
// Megatron-Bridge builds Megatron-Core models: Megatron-LM's refusals except LoRA (PEFT).
std::optional<ExportRefusal> nemo_refusal(const Job& job);
std::string export_launch_settings(const Job& job, ExportFormat format);

std::string export_megatron(const Job& job);
std::string export_nemo(const Job& job);
std::string export_torchtitan(const Job& job);

// torchtitan main (pytorch/torchtitan b5bcd76c): a Python config function (the TOML job config
// gave way to Python in commit 9810191b). Its refusals are v0.2.2's but the MoE dispatcher
// (main runs DeepEP and HybridEP: model_registry(moe_comm_backend=...)), and experts without
// tensor parallelism (main's expert parallelism takes its ranks from FSDP and TP).
std::optional<ExportRefusal> torchtitan_main_refusal(const Job& job);
std::string export_torchtitan_main(const Job& job);

namespace launch {

// Megatron-Core's refusals, shared by Megatron-LM and Megatron-Bridge: pipeline schedule, rank
// order, FSDP hybrid sharding, ALiBi, the MoE overlap in fp32.
std::optional<ExportRefusal> megatron_core_refusal(const Job& job);

// torchtitan's refusals shared by v0.2.2 and main: models it does not ship, Megatron's
// recompute modules and offloading, ZeRO-1, DDP beside other parallelism, schedules, LoRA, the
// MoE batch-level overlap. v0.2.2 adds its MoE dispatchers (DeepEP for deepseek_v3 only, no
// HybridEP).
std::optional<ExportRefusal> torchtitan_shared_refusal(const Job& job);

// The fp8 recipe every format names for one job, so that all three run what the memory and
// time model assumes (cost_models/framework_traits.h fp8_recipe_is_mxfp8,
// FrameworkTraits::fp8_params): per-tensor current scaling ("tensorwise", E4M3 forward and E5M2
// gradients: "hybrid") before Blackwell, MXFP8 (E4M3 for every tensor) on Blackwell; fp8
// parameter all-gathers where the model counts parameters in fp8 and the plan shards the
// optimizer (ZeRO >= 1; Megatron refuses --fp8-param-gather without a distributed optimizer or
// FSDP); MXFP8's gathers go through the gradient buffer under the distributed optimizer
// (Megatron-Bridge bf16_with_mxfp8_mixed; Megatron-LM turns the reuse off for Megatron-FSDP).
struct Fp8Launch {
  const char* format;  // Megatron --fp8-format, Megatron-Bridge fp8
  const char* recipe;  // Megatron --fp8-recipe, Megatron-Bridge fp8_recipe
  bool param_gather;   // --fp8-param-gather, fp8_param_gather
  // Megatron --reuse-grad-buf-for-mxfp8-param-ag (Bridge's reuse_grad_buf_for_mxfp8_param_ag
  // follows every MXFP8 parameter gather instead: launch_nemo.cpp)
  bool reuse_grad_buf_for_param_gather;
  const char* torchtitan_converter;  // quantize.linear.<this>, quantize.grouped_mm.<this>
};
Fp8Launch fp8_launch(const Job& job);

// Header lines shared by the formats: what job, which model, which plan.
std::string header(const Job& job, std::string_view format_title, std::string_view sources);

// Whether the job's memory prediction assumes PyTorch's expandable segments
// (training.expandable_segments, where the framework allocates through PyTorch).
bool uses_expandable_segments(const Job& job);

// 1 per layer that has an MoE MLP, 0 per dense layer, in layer order.
std::vector<int> moe_layer_pattern(const ModelSpec& model);

// Megatron's --moe-layer-freq list expression, run-length encoded: "([0]*3+[1]*58)".
std::string megatron_pattern_expression(const std::vector<int>& pattern);

// Layers per model chunk when they are all equal, else 0.
int64_t even_layers_per_chunk(const Job& job);

// The layers of the first and last pipeline stage when Megatron's first/last-stage counts
// describe the split (--decoder-first/last-pipeline-num-layers, Bridge's
// num_layers_in_first/last_pipeline_stage): no virtual stages, at least three stages, the
// middle ones even, and both counts positive (transformer_config.py __post_init__: "must be
// larger than 0"); else nothing, and the split needs the layout.
std::optional<std::pair<int64_t, int64_t>> first_last_stage_layers(const Job& job);

// Megatron's --pipeline-model-parallel-layout for layer counts per model chunk in pipeline
// order (chunk c of stage s at c*pp + s): the embedding on the first chunk, the loss on the
// last, "|" between chunks: {3, 2, 2} -> "Et*3|t*2|t*2L".
std::string megatron_pipeline_layout(const std::vector<int64_t>& chunk_layers);

// The plan with the 1F1B schedule every framework runs instead of the one it lacks: interleaved
// with virtual stages, else plain 1F1B (the nearest plan of a schedule refusal).
ParallelPlan with_1f1b_schedule(const ParallelPlan& plan);

// A number as %g prints it ("8", "0.5").
std::string number_text(double v);

// The largest power of two, at most Megatron's default 128, whose multiple by tp divides the
// vocabulary: Megatron then leaves the vocabulary unpadded (megatron/training/vocab_utils.py
// pads to a multiple of make_vocab_size_divisible_by * tp).
int64_t vocab_divisor(int64_t vocab, int64_t tp);

// torchtitan's model name and flavor for a model of that shape (llama3 8B, ...), if it ships one.
std::optional<std::pair<std::string, std::string>> torchtitan_model(const ModelSpec& model);

// Module names of each model chunk in pipeline order (the names
// generate_llm_fqn_per_model_part gives torchtitan's decoder models), as a list of lists:
// [["tok_embeddings", "layers.0"], ["layers.1", "norm", "output"]].
std::string torchtitan_module_fqns(const Job& job);

// Whether the model has no dropout (Llama-style), for the frameworks' dropout settings.
bool trains_without_dropout(const ModelSpec& model);

// The plan's recompute modules by Megatron's names (kRecomputeModuleNames), joined by
// `separator`; empty when the plan names none.
std::string recompute_module_list(const ParallelPlan& plan, const std::string& separator);

}  // namespace launch

}  // namespace parplan::tools
