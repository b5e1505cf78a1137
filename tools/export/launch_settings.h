// Launch settings for a job's plan in the training frameworks' own spellings: Megatron-LM
// command-line flags (megatron/training/arguments.py), a Megatron-Bridge / NeMo 2 recipe
// override (YAML of ConfigContainer fields) and a torchtitan TOML job-config section. A plan
// key a framework cannot express becomes a comment saying so, never an invented flag.
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

// Whether the model has no dropout (Llama-style), for the frameworks' dropout settings.
bool trains_without_dropout(const ModelSpec& model);

}  // namespace launch

}  // namespace parplan::tools
