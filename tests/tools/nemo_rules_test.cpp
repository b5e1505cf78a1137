// What `parplan export --format nemo` prints must pass Megatron-Bridge's own checks
// (NVIDIA-NeMo/Megatron-Bridge at 067f987d: training/config.py ConfigContainer.validate,
// training/utils/omegaconf_utils.py _apply_overrides, recipes/common.py), and all three formats
// must name the same fp8 recipe for one plan. Read back with parplan's own YAML reader.
#include <gtest/gtest.h>

#include <map>

#include "core/job.h"
#include "planner/search.h"
#include "tests/tools/launch_rules_jobs.h"
#include "tools/export/launch_settings.h"
#include "tools/import/launch_text.h"

namespace parplan {
namespace {

using tools::ExportFormat;

std::map<std::string, std::string> read_yaml(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& s : tools::read_yaml_settings(text, "nemo.yaml")) out[s.key] = s.value;
  return out;
}

std::map<std::string, std::string> read_megatron(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& s : tools::read_megatron_arguments(text, "megatron.sh")) out[s.key] = s.value;
  return out;
}

Job job_from(const std::string& text) { return testing::launch_job_from(text); }

// Megatron-Bridge's rules on the override.
void expect_bridge_accepts(const Job& job, const std::string& text) {
  SCOPED_TRACE(text);
  const auto y = read_yaml(text);
  // A field the override sets to something (null leaves it unset).
  auto given = [&](const std::string& key) { return y.count(key) && y.at(key) != "null"; };
  auto number = [&](const std::string& key, int64_t fallback) {
    return given(key) ? std::stoll(y.at(key)) : fallback;
  };
  // A section the recipe may leave None (comm_overlap; mixed_precision given as fields) must
  // name its class, or _apply_overrides sets a plain dict that .finalize() cannot use.
  for (const char* section : {"comm_overlap", "mixed_precision"}) {
    bool fields = false;
    for (const auto& [key, value] : y) fields |= key.rfind(std::string(section) + ".", 0) == 0;
    if (fields) {
      EXPECT_TRUE(y.count(std::string(section) + "._target_")) << section;
    }
  }
  // config.py: Megatron-FSDP requires the fsdp_dtensor checkpoint format, and that format
  // only Megatron-FSDP.
  const bool fsdp = y.count("ddp.use_megatron_fsdp") && y.at("ddp.use_megatron_fsdp") == "true";
  EXPECT_EQ(y.at("checkpoint.ckpt_format"), fsdp ? "fsdp_dtensor" : "torch_dist");
  const int64_t tp = number("model.tensor_model_parallel_size", 1);
  const int64_t pp = number("model.pipeline_model_parallel_size", 1);
  const int64_t cp = number("model.context_parallel_size", 1);
  const int64_t layers = number("model.num_layers", 0);
  ASSERT_EQ(job.cluster.num_gpus % (tp * pp * cp), 0);
  const int64_t dp = job.cluster.num_gpus / (tp * pp * cp);
  EXPECT_EQ(number("train.global_batch_size", 0) % (number("train.micro_batch_size", 1) * dp), 0);
  EXPECT_EQ(number("model.num_attention_heads", 0) % tp, 0);
  EXPECT_EQ(number("model.num_query_groups", 1) % tp, 0);
  // TransformerConfig: a layout excludes the first/last-stage counts; every split is given.
  EXPECT_FALSE(given("model.pipeline_model_parallel_layout") &&
               given("model.num_layers_in_first_pipeline_stage"));
  EXPECT_TRUE(y.count("model.virtual_pipeline_model_parallel_size"));
  EXPECT_EQ(y.at("model.account_for_embedding_in_pipeline_split"), "false");
  // First/last-stage counts "must be larger than 0" (TransformerConfig __post_init__).
  for (const char* key :
       {"model.num_layers_in_first_pipeline_stage", "model.num_layers_in_last_pipeline_stage"}) {
    if (given(key)) {
      EXPECT_GT(number(key, 0), 0) << key;
    }
  }
  if (!given("model.pipeline_model_parallel_layout") &&
      !given("model.num_layers_in_first_pipeline_stage")) {
    EXPECT_EQ(layers % (pp * number("model.virtual_pipeline_model_parallel_size", 1)), 0);
  }
  if (y.count("comm_overlap._target_")) {
    EXPECT_TRUE(y.count("comm_overlap.tp_comm_overlap"));  // CommOverlapConfig has no default
  }
  if (y.count("comm_overlap.tp_comm_overlap") && y.at("comm_overlap.tp_comm_overlap") == "true") {
    EXPECT_EQ(y.at("model.sequence_parallel"), "true");
  }
  // comm_overlap.py _get_model_comm_overlap_cfgs on the MoE overlap (as Megatron-Core's
  // TransformerConfig): expert parallelism, the alltoall or flex dispatcher, bf16 or fp16,
  // virtual stages when pipelining, no full recomputation, recompute method or layer count,
  // no shared-expert overlap; delay_wgrad_compute only with it.
  const auto is_true = [&](const std::string& key) { return y.count(key) && y.at(key) == "true"; };
  if (is_true("comm_overlap.overlap_moe_expert_parallel_comm")) {
    EXPECT_GT(number("model.expert_model_parallel_size", 1), 1);
    const std::string dispatcher = y.at("model.moe_token_dispatcher_type");
    EXPECT_TRUE(dispatcher == "alltoall" || dispatcher == "flex") << dispatcher;
    const std::string precision = y.count("mixed_precision") ? y.at("mixed_precision") : "";
    EXPECT_TRUE(is_true("mixed_precision.bf16") || is_true("mixed_precision.fp16") ||
                precision == "bf16_mixed" || precision == "fp16_mixed")
        << precision;
    if (pp > 1) {
      EXPECT_TRUE(given("model.virtual_pipeline_model_parallel_size"));
    }
    EXPECT_NE(y.at("model.recompute_granularity"), "full");
    EXPECT_FALSE(given("model.recompute_method"));
    EXPECT_FALSE(given("model.recompute_num_layers"));
    EXPECT_EQ(y.at("model.moe_shared_expert_overlap"), "false");
    EXPECT_EQ(y.at("env_vars.CUDA_DEVICE_MAX_CONNECTIONS"), "32");
  }
  if (is_true("comm_overlap.delay_wgrad_compute")) {
    EXPECT_TRUE(is_true("comm_overlap.overlap_moe_expert_parallel_comm"));
  }
  if (y.count("model.moe_token_dispatcher_type") &&
      y.at("model.moe_token_dispatcher_type") == "flex") {
    EXPECT_TRUE(given("model.moe_flex_dispatcher_backend"));
  }
  // Megatron-Core: fp8 parameter gathers need the distributed optimizer or Megatron-FSDP.
  if (y.count("mixed_precision.fp8_param_gather") &&
      y.at("mixed_precision.fp8_param_gather") == "true") {
    EXPECT_TRUE(y.at("ddp.use_distributed_optimizer") == "true" || fsdp);
  }
  // config.py: without Megatron-FSDP, fp8 parameter gathers under MXFP8 need
  // reuse_grad_buf_for_mxfp8_param_ag (asserted); the DDP config's docstring: "set to True
  // only when fp8_recipe is mxfp8 and fp8_param_gather is True".
  const auto is_true_at = [&](const std::string& key) {
    return y.count(key) > 0 && y.at(key) == "true";
  };
  if (!fsdp && is_true_at("mixed_precision.fp8_param_gather") &&
      y.at("mixed_precision.fp8_recipe") == "mxfp8") {
    EXPECT_TRUE(is_true_at("mixed_precision.reuse_grad_buf_for_mxfp8_param_ag"));
  }
  if (is_true_at("mixed_precision.reuse_grad_buf_for_mxfp8_param_ag")) {
    EXPECT_EQ(y.at("mixed_precision.fp8_recipe"), "mxfp8");
    EXPECT_TRUE(is_true_at("mixed_precision.fp8_param_gather"));
  }
  if (y.count("model.num_moe_experts")) {
    EXPECT_EQ(y.at("model.moe_grouped_gemm"), "true");
  }
}

TEST(NemoRules, ThePlannersBestPlansPassBridgesChecks) {
  for (const char* text : {
           R"({"model": "llama3.1-70b", "cluster": {"node": "dgx-h100", "num_nodes": 8},
               "training": {"global_batch_size": 512, "seq_length": 8192, "precision": "fp8"}})",
           R"({"model": "mixtral-8x7b", "cluster": {"node": "dgx-h100", "num_nodes": 8},
               "training": {"global_batch_size": 512, "seq_length": 4096}})",
           R"({"model": "qwen2.5-72b", "cluster": {"node": "dgx-b200", "num_nodes": 8},
               "training": {"global_batch_size": 256, "seq_length": 4096, "precision": "fp8"}})",
           R"({"model": "gpt3-175b", "cluster": {"node": "dgx-a100-80gb", "num_nodes": 32},
               "training": {"global_batch_size": 1536, "seq_length": 2048}})",
       }) {
    Job job = job_from(text);
    planner::SearchOptions options;
    options.top_k = 3;
    options.threads = 1;
    for (const planner::RankedPlan& ranked : planner::search_plans(job, options).top) {
      job.plan = ranked.plan;
      job.plan_given = true;
      for (int round = 0; round < 4; ++round) {
        const auto refusal = tools::nemo_refusal(job);
        if (!refusal) break;
        ASSERT_TRUE(refusal->nearest.has_value()) << refusal->key;
        job.plan = *refusal->nearest;
      }
      expect_bridge_accepts(job, tools::export_nemo(job));
    }
  }
}

// Chunks holding only the embedding or the output layer (Llama 3.1 405B's 126 layers on 128
// chunks, as Bridge's own 405B recipes run them) go through the layout, never a zero
// first/last-stage count.
TEST(NemoRules, EmbeddingAndOutputOnlyChunksUseTheLayout) {
  for (const Job& job : testing::jobs_with_embedding_and_output_only_chunks()) {
    ASSERT_FALSE(tools::nemo_refusal(job).has_value());
    const std::string text = tools::export_nemo(job);
    const auto y = read_yaml(text);
    EXPECT_EQ(y.at("model.num_layers_in_first_pipeline_stage"), "null");
    EXPECT_NE(y.at("model.pipeline_model_parallel_layout"), "null");
    expect_bridge_accepts(job, text);
  }
}

// One fp8 recipe for one plan, whichever framework launches it: per-tensor current scaling
// before Blackwell, MXFP8 on it (Megatron checks MXFP8 is Blackwell-only).
TEST(NemoRules, AllFormatsNameTheSameFp8Recipe) {
  for (const char* node : {"dgx-h100", "dgx-b200"}) {
    const Job job = job_from(std::string(R"({"model": "llama3.1-8b", "cluster": {"node": ")") +
                             node + R"(", "num_nodes": 1}, "training": {"global_batch_size": 64,
        "seq_length": 4096, "precision": "fp8"}, "plan": {"tp": 2, "zero_stage": 1}})");
    SCOPED_TRACE(node);
    const auto mg = read_megatron(tools::export_megatron(job));
    const auto nm = read_yaml(tools::export_nemo(job));
    const std::string tt = tools::export_torchtitan(job);
    EXPECT_EQ(mg.at("--fp8-recipe"), nm.at("mixed_precision.fp8_recipe"));
    EXPECT_EQ(mg.at("--fp8-format"), nm.at("mixed_precision.fp8"));
    EXPECT_EQ(mg.count("--fp8-param-gather") > 0,
              nm.at("mixed_precision.fp8_param_gather") == "true");
    EXPECT_EQ(mg.count("--reuse-grad-buf-for-mxfp8-param-ag") > 0,
              nm.at("mixed_precision.reuse_grad_buf_for_mxfp8_param_ag") == "true");
    const bool blackwell = job.cluster.node.gpu.architecture == "blackwell";
    EXPECT_EQ(mg.at("--fp8-recipe"), blackwell ? "mxfp8" : "tensorwise");
    EXPECT_EQ(mg.at("--fp8-format"), blackwell ? "e4m3" : "hybrid");
    EXPECT_NE(tt.find(blackwell ? "quantize.linear.mx" : "quantize.linear.float8"),
              std::string::npos);
  }
}

TEST(NemoRules, PlansBridgeCannotRunAreRefusedWithTheNearestPlan) {
  const std::string base = R"("model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 2}, "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": )";
  struct Case {
    const char* plan;
    const char* key;
  };
  for (const Case& c :
       {Case{R"({"pp": 4, "schedule": "gpipe"})", "plan.schedule"},
        Case{R"({"pp": 4, "schedule": "zero-bubble"})", "plan.schedule"},
        Case{R"({"pp": 4, "schedule": "dualpipe"})", "plan.schedule"},
        Case{R"({"tp": 2, "pp": 2, "order": "tp-pp-dp"})", "plan.order"},
        Case{R"({"tp": 2, "zero_stage": 3, "zero_shard_size": 4})", "plan.zero_shard_size"}}) {
    const Job job = job_from("{" + base + c.plan + "}");
    const auto refusal = tools::nemo_refusal(job);
    ASSERT_TRUE(refusal.has_value()) << c.plan;
    EXPECT_EQ(refusal->key, c.key);
    ASSERT_TRUE(refusal->nearest.has_value());
    Job nearest = job;
    nearest.plan = *refusal->nearest;
    EXPECT_FALSE(tools::nemo_refusal(nearest).has_value()) << c.plan;
  }
  // LoRA is Megatron-Bridge PEFT, not a refusal.
  const Job lora = job_from(R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 1}, "training": {"global_batch_size": 32, "seq_length": 4096,
      "method": "lora", "lora_rank": 16}, "plan": {"tp": 2}})");
  EXPECT_FALSE(tools::nemo_refusal(lora).has_value());
  EXPECT_TRUE(tools::megatron_refusal(lora).has_value());
  // The header says what the file is and which Bridge it targets.
  const std::string text = tools::export_nemo(lora);
  EXPECT_NE(text.find("Megatron-Bridge ConfigContainer override"), std::string::npos);
  EXPECT_NE(text.find("067f987d"), std::string::npos);
}

}  // namespace
}  // namespace parplan
