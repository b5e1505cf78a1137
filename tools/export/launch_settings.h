// Launch settings for a job's plan in the training frameworks' own spellings: Megatron-LM
// command-line flags (megatron/training/arguments.py), a Megatron-Bridge / NeMo 2 recipe
// override (YAML of ConfigContainer fields) and a torchtitan TOML job-config section. A plan
// Megatron-LM cannot run is refused (export_refusal: `parplan export` exits 2 naming the key
// and the nearest plan it can run); other formats still note such keys as comments.
// Tested in tests/tools/export_test.cpp: every printed flag or key is in the documented lists
// tests/data/export/{megatron,nemo,torchtitan}_flags.txt.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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
std::string export_launch_settings(const Job& job, ExportFormat format);

std::string export_megatron(const Job& job);
std::string export_nemo(const Job& job);
std::string export_torchtitan(const Job& job);

namespace launch {

// Header lines shared by the formats: what job, which model, which plan.
std::string header(const Job& job, std::string_view format_title, std::string_view sources);

// 1 per layer that has an MoE MLP, 0 per dense layer, in layer order.
std::vector<int> moe_layer_pattern(const ModelSpec& model);

// Megatron's --moe-layer-freq list expression, run-length encoded: "([0]*3+[1]*58)".
std::string megatron_pattern_expression(const std::vector<int>& pattern);

// Layers per model chunk when they are all equal, else 0.
int64_t even_layers_per_chunk(const Job& job);

// Megatron's --pipeline-model-parallel-layout for layer counts per model chunk in pipeline
// order (chunk c of stage s at c*pp + s): the embedding on the first chunk, the loss on the
// last, "|" between chunks: {3, 2, 2} -> "Et*3|t*2|t*2L".
std::string megatron_pipeline_layout(const std::vector<int64_t>& chunk_layers);

// The plan with the 1F1B schedule every framework runs instead of the one it lacks: interleaved
// with virtual stages, else plain 1F1B (the nearest plan of a schedule refusal).
ParallelPlan with_1f1b_schedule(const ParallelPlan& plan);

// Whether the model has no dropout (Llama-style), for the frameworks' dropout settings.
bool trains_without_dropout(const ModelSpec& model);

}  // namespace launch

}  // namespace parplan::tools
