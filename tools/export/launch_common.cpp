// What the export formats share: format names, refusal dispatch, the header, pipeline layouts,
// the fp8 recipe and vocabulary divisor. Tested in tests/tools/export_test.cpp.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/frameworks/registry.h"
#include "core/plural.h"
#include "cost_models/framework_traits.h"
#include "cost_models/memory_model.h"
#include "cost_models/moe_dispatch.h"
#include "tools/export/launch_settings.h"
#include "tools/report/report_data.h"

namespace parplan::tools {

std::optional<ExportFormat> parse_export_format(std::string_view name) {
  if (name == "megatron") return ExportFormat::Megatron;
  if (name == "nemo") return ExportFormat::Nemo;
  if (name == "torchtitan") return ExportFormat::Torchtitan;
  return std::nullopt;
}

const char* framework_title(ExportFormat format) {
  switch (format) {
    case ExportFormat::Nemo:
      return "Megatron-Bridge";
    case ExportFormat::Torchtitan:
      return "torchtitan";
    case ExportFormat::Megatron:
      break;
  }
  return "Megatron-LM";
}

std::optional<ExportRefusal> export_refusal(const Job& job, ExportFormat format) {
  if (format == ExportFormat::Megatron) return megatron_refusal(job);
  if (format == ExportFormat::Torchtitan) return torchtitan_refusal(job);
  return nemo_refusal(job);
}

std::string export_launch_settings(const Job& job, ExportFormat format) {
  switch (format) {
    case ExportFormat::Nemo:
      return export_nemo(job);
    case ExportFormat::Torchtitan:
      return export_torchtitan(job);
    case ExportFormat::Megatron:
      break;
  }
  return export_megatron(job);
}

namespace launch {

std::string header(const Job& job, std::string_view format_title, std::string_view sources) {
  std::string out = "# " + std::string(format_title) + " for " +
                    std::filesystem::path(job.file).filename().string() + ": " + job.model.name +
                    " on " + count_of(job.cluster.num_gpus, "GPU") + " (" +
                    std::to_string(job.cluster.num_nodes) + " x " + job.cluster.node.name + ")\n";
  out += "# plan: " + plan_summary(job.plan) + " (schedule " + to_string(job.plan.schedule) +
         ", order " + job.plan.order + ")";
  if (!job.plan_given) out += "; the job file has no plan, so the default plan is used";
  out += "\n# names: " + std::string(sources) + "\n";
  // Frameworks no export format launches (core/frameworks/<name>.cpp, export_formats).
  if (framework_info(job.framework).export_formats.empty()) {
    out += std::string("# note: the job's framework is ") + to_string(job.framework) +
           "; parplan's predictions assume that framework, not this one\n";
  }
  // An allocator setting the process must see before CUDA starts, so it belongs to the
  // launching environment in every format (the Megatron-LM script also exports it).
  if (uses_expandable_segments(job)) {
    out +=
        "# environment: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
        "(training.expandable_segments; the memory prediction assumes it)\n";
  }
  return out;
}

bool uses_expandable_segments(const Job& job) {
  return cost::framework_traits(job.framework, job.training, job.plan).expandable_segments;
}

std::vector<int> moe_layer_pattern(const ModelSpec& model) {
  std::vector<int> pattern;
  for (int64_t l = 0; l < model.num_layers; ++l) pattern.push_back(model.is_moe_layer(l) ? 1 : 0);
  return pattern;
}

std::string megatron_pattern_expression(const std::vector<int>& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size();) {
    std::size_t j = i;
    while (j < pattern.size() && pattern[j] == pattern[i]) ++j;
    out += (out.empty() ? "" : "+") + std::string("[") + std::to_string(pattern[i]) + "]*" +
           std::to_string(j - i);
    i = j;
  }
  return "(" + out + ")";
}

int64_t even_layers_per_chunk(const Job& job) {
  const auto chunks = layers_per_chunk(job.model, job.plan);
  if (chunks.empty()) return 0;
  const bool even =
      std::all_of(chunks.begin(), chunks.end(), [&](int64_t n) { return n == chunks.front(); });
  return even ? chunks.front() : 0;
}

std::optional<std::pair<int64_t, int64_t>> first_last_stage_layers(const Job& job) {
  if (job.plan.vpp != 1) return std::nullopt;
  const auto chunks = layers_per_chunk(job.model, job.plan);
  if (chunks.size() <= 2 || chunks.front() <= 0 || chunks.back() <= 0) return std::nullopt;
  for (std::size_t i = 2; i + 1 < chunks.size(); ++i) {
    if (chunks[i] != chunks[1]) return std::nullopt;
  }
  return std::pair{chunks.front(), chunks.back()};
}

std::string megatron_pipeline_layout(const std::vector<int64_t>& chunk_layers) {
  std::string out;
  for (std::size_t i = 0; i < chunk_layers.size(); ++i) {
    if (i > 0) out += "|";
    if (i == 0) out += "E";
    const int64_t n = chunk_layers[i];
    if (n == 1) out += "t";
    if (n > 1) out += "t*" + std::to_string(n);
    if (i + 1 == chunk_layers.size()) out += "L";
  }
  return out;
}

ParallelPlan with_1f1b_schedule(const ParallelPlan& plan) {
  ParallelPlan out = plan;
  out.schedule = plan.vpp > 1 ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
  return out;
}

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

int64_t vocab_divisor(int64_t vocab, int64_t tp) {
  int64_t d = 128;
  while (d > 1 && vocab % (d * tp) != 0) d /= 2;
  return d;
}

Fp8Launch fp8_launch(const Job& job) {
  const auto traits = cost::framework_traits(job.framework, job.training, job.plan);
  const bool param_gather = cost::fp8_params_kept(traits, job.plan);
  if (cost::fp8_recipe_is_mxfp8(job.cluster.node.gpu)) {
    // Through the gradient buffer under the distributed optimizer (ZeRO 1); the exports run
    // ZeRO 2 and 3 as Megatron-FSDP, which does not implement it (Megatron-Bridge config.py
    // deactivates it there).
    return {"e4m3", "mxfp8", param_gather, param_gather && job.plan.zero_stage == 1, "mx"};
  }
  return {"hybrid", "tensorwise", param_gather, false, "float8"};
}

bool trains_without_dropout(const ModelSpec& model) { return !cost::model_uses_dropout(model); }

std::string recompute_module_list(const ParallelPlan& plan, const std::string& separator) {
  std::string out;
  for (const auto& module : kRecomputeModuleNames) {
    if (plan.recompute_modules & module.bit) {
      out += (out.empty() ? "" : separator) + std::string(module.name);
    }
  }
  return out;
}

}  // namespace launch

}  // namespace parplan::tools
