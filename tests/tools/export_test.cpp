// parplan export: every flag or key printed for many plans (parallelism kinds, ZeRO stages,
// schedules, rank orders, precisions, recomputation, dense/MoE/MLA models, training methods)
// must be in the framework's documented list (tests/data/export/*_flags.txt, each citing its
// source), with an allowed value where the list restricts values; plan features must map to
// the expected settings, and keys without an equivalent must become comments.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "core/frameworks/registry.h"
#include "core/job.h"
#include "cost_models/moe_dispatch.h"
#include "planner/prediction_interval.h"
#include "planner/search.h"
#include "tests/tools/qwen3_235b_job.h"
#include "tests/tools/test_support.h"
#include "tools/export/launch_settings.h"

namespace parplan::testing {
namespace {

using tools::ExportFormat;

// name -> allowed values (empty: any value).
using FlagList = std::map<std::string, std::set<std::string>>;

FlagList load_list(const std::string& name) {
  std::istringstream in(read_file(std::string(PARPLAN_TEST_DATA) + "/export/" + name));
  FlagList list;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    // "name" or "name values": values run to the end of the line ("{a: b}" has spaces).
    const auto space = line.find(' ');
    const std::string flag = line.substr(0, space);
    const std::string values = space == std::string::npos ? "" : line.substr(space + 1);
    std::set<std::string>& allowed = list[flag];
    for (std::size_t start = 0; !values.empty() && start <= values.size();) {
      const std::size_t bar = values.find('|', start);
      allowed.insert(values.substr(start, bar == std::string::npos ? bar : bar - start));
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
  }
  return list;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// (name, value) pairs of the settings a text sets, comments excluded.
std::vector<std::pair<std::string, std::string>> settings(const std::string& text,
                                                          ExportFormat format) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line, section;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    switch (format) {
      case ExportFormat::Megatron: {
        if (t.rfind("--", 0) != 0) continue;  // MEGATRON_ARGS=( and )
        const auto space = t.find(' ');
        std::string value = space == std::string::npos ? "" : t.substr(space + 1);
        if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
        out.emplace_back(t.substr(0, space), value);
        break;
      }
      case ExportFormat::Nemo: {
        const auto colon = t.find(':');
        const std::string key = t.substr(0, colon);
        const std::string value = trim(t.substr(colon + 1));
        if (line[0] != ' ') {
          if (value.empty()) {
            section = key;
          } else {
            out.emplace_back(key, value);
            section.clear();
          }
        } else {
          out.emplace_back(section + "." + key, value);
        }
        break;
      }
      case ExportFormat::Torchtitan: {
        if (t[0] == '[') {
          section = t.substr(1, t.size() - 2);
          continue;
        }
        const auto eq = t.find(" = ");
        out.emplace_back(section + "." + t.substr(0, eq), t.substr(eq + 3));
        break;
      }
    }
  }
  return out;
}

Job job_from(const std::string& text) {
  return parse_job(parse_json(text, "job.json"), "job.json", PARPLAN_SOURCE_DIR,
                   PlanCheck::Enforce);
}

// Jobs covering the plan keys, models and training setups export must handle.
std::map<std::string, Job> variant_jobs() {
  const std::string llama8b =
      R"("model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 2},
         "training": {"global_batch_size": 64, "seq_length": 4096, "precision": "%P"})";
  auto llama = [&](const std::string& plan, const std::string& precision = "bf16",
                   const std::string& extra = "") {
    std::string base = llama8b;
    base.replace(base.find("%P"), 2, precision);
    return job_from("{" + base + extra + R"(, "plan": )" + plan + "}");
  };
  std::map<std::string, Job> jobs;
  jobs["llama70b-example"] =
      load_job(std::string(PARPLAN_SOURCE_DIR) + "/tools/examples/llama3.1-70b-dgx-h100.json");
  jobs["gpt3-example"] =
      load_job(std::string(PARPLAN_SOURCE_DIR) + "/tools/examples/gpt3-175b-dgx-a100.json");
  jobs["zero3"] = llama(R"({"tp": 1, "zero_stage": 3})");
  jobs["zero2-hybrid"] = llama(R"({"tp": 2, "zero_stage": 2, "zero_shard_size": 4})");
  jobs["zero1-instances"] = llama(R"({"tp": 2, "zero_stage": 1, "zero_shard_size": 2})");
  jobs["zero0"] = llama(R"({"tp": 4, "zero_stage": 0})");
  jobs["recompute-full"] = llama(R"({"tp": 2, "pp": 2, "recompute": "full"})");
  jobs["recompute-selective"] = llama(R"({"tp": 2, "recompute": "selective"})");
  jobs["recompute-modules"] =
      llama(R"({"tp": 2, "recompute": "selective", "recompute_modules": ["core_attn", "mlp"]})");
  jobs["offload"] = llama(R"({"tp": 2, "offload_activation_layers": 8})");
  jobs["fp8"] = llama(R"({"tp": 2})", "fp8");
  jobs["fp8-zero0"] = llama(R"({"tp": 2, "zero_stage": 0})", "fp8");
  jobs["fp8-blackwell"] = job_from(
      R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-b200", "num_nodes": 2},
          "training": {"global_batch_size": 64, "seq_length": 4096, "precision": "fp8"},
          "plan": {"tp": 2}})");
  jobs["fp8-blackwell-zero3"] = job_from(
      R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-b200", "num_nodes": 2},
          "training": {"global_batch_size": 64, "seq_length": 4096, "precision": "fp8"},
          "plan": {"tp": 2, "zero_stage": 3}})");
  jobs["fp16"] = llama(R"({"tp": 2})", "fp16");
  jobs["bf16-default"] = llama(R"({"tp": 2})");
  jobs["fp32"] = llama(R"({"tp": 2})", "fp32");
  jobs["cp2"] = llama(R"({"tp": 2, "cp": 2})");
  jobs["order-pp-dp"] = llama(R"({"tp": 2, "pp": 2, "order": "tp-cp-ep-pp-dp"})");
  jobs["order-other"] = llama(R"({"tp": 2, "pp": 2, "order": "tp-pp-dp"})");
  jobs["gpipe"] = llama(R"({"pp": 4, "schedule": "gpipe"})");
  jobs["zero-bubble"] = llama(R"({"pp": 4, "schedule": "zero-bubble"})");
  jobs["dualpipe"] = llama(R"({"pp": 4, "schedule": "dualpipe"})");
  jobs["uneven-first-last"] = llama(R"({"pp": 4, "layers_per_stage": [6, 10, 10, 6]})");
  jobs["uneven-other"] = llama(R"({"pp": 4, "layers_per_stage": [7, 9, 8, 8]})");
  jobs["vpp-uneven"] = llama(R"({"pp": 2, "vpp": 3, "micro_batch_size": 1})");
  jobs["no-sp"] = llama(R"({"tp": 2, "sequence_parallel": false})");
  jobs["lora"] = job_from(R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 1}, "training": {"global_batch_size": 32, "seq_length": 4096,
      "method": "lora", "lora_rank": 16}, "plan": {"tp": 2}})");
  jobs["sft"] = job_from(R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 1}, "training": {"global_batch_size": 32, "seq_length": 4096,
      "method": "sft"}, "plan": {"tp": 2}})");
  jobs["torchtitan"] = job_from(R"({"framework": "torchtitan", "model": "llama3.1-8b",
      "cluster": {"node": "dgx-h100", "num_nodes": 2}, "training": {"global_batch_size": 64,
      "seq_length": 4096}, "plan": {"tp": 2, "pp": 2}})");
  jobs["torchtitan-compile"] = job_from(R"({"framework": "torchtitan", "model": "llama3.1-8b",
      "cluster": {"node": "dgx-h100", "num_nodes": 2}, "training": {"global_batch_size": 64,
      "seq_length": 4096, "torch_compile": true}, "plan": {"tp": 2, "pp": 2}})");
  jobs["deepseek-v3"] = job_from(R"({"model": "deepseek-v3", "cluster": {"node": "dgx-h100",
      "num_nodes": 32}, "training": {"global_batch_size": 512, "seq_length": 4096},
      "plan": {"tp": 2, "pp": 8, "ep": 8, "recompute": "full"}})");
  jobs["mixtral-ep"] = job_from(R"({"model": "mixtral-8x7b", "cluster": {"node": "dgx-h100",
      "num_nodes": 2}, "training": {"global_batch_size": 64, "seq_length": 4096},
      "plan": {"tp": 4, "ep": 8}})");
  jobs["no-plan"] = job_from(R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 1}, "training": {"global_batch_size": 64, "seq_length": 2048}})");
  jobs["qwen3-235b-deepep"] = qwen3_235b_job("");
  jobs["qwen3-235b-overlap"] = qwen3_235b_job(R"(, "moe_a2a_overlap": true)");
  jobs["qwen3-235b-hybridep"] = qwen3_235b_job(R"(, "moe_dispatcher": "hybridep")");
  jobs["deepseek-v3-deepep-etp1"] = job_from(R"({"model": "deepseek-v3", "cluster": {"node":
      "dgx-h100", "num_nodes": 32}, "training": {"global_batch_size": 512, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 8, "ep": 32, "zero_stage": 3, "recompute": "full"}})");
  return jobs;
}

struct FormatCase {
  ExportFormat format;
  const char* list;
};

class ExportNames : public ::testing::TestWithParam<FormatCase> {};

TEST_P(ExportNames, EveryPrintedNameIsDocumented) {
  const FlagList list = load_list(GetParam().list);
  ASSERT_FALSE(list.empty());
  for (const auto& [name, job] : variant_jobs()) {
    const std::string text = tools::export_launch_settings(job, GetParam().format);
    const auto found = settings(text, GetParam().format);
    EXPECT_FALSE(found.empty()) << name;
    for (const auto& [key, value] : found) {
      auto it = list.find(key);
      ASSERT_NE(it, list.end()) << name << ": " << key << " is not in " << GetParam().list << "\n"
                                << text;
      if (!it->second.empty()) {
        EXPECT_TRUE(it->second.count(value)) << name << ": " << key << " = " << value;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ExportNames,
                         ::testing::Values(FormatCase{ExportFormat::Megatron, "megatron_flags.txt"},
                                           FormatCase{ExportFormat::Nemo, "nemo_flags.txt"},
                                           FormatCase{ExportFormat::Torchtitan,
                                                      "torchtitan_flags.txt"}));

std::map<std::string, std::string> as_map(const Job& job, ExportFormat format) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : settings(tools::export_launch_settings(job, format), format)) {
    out[k] = v;
  }
  return out;
}

TEST(Export, PlanKeysMapToTheFrameworksSettings) {
  const auto jobs = variant_jobs();
  auto mg = [&](const char* job) { return as_map(jobs.at(job), ExportFormat::Megatron); };
  auto nm = [&](const char* job) { return as_map(jobs.at(job), ExportFormat::Nemo); };
  auto tt = [&](const char* job) { return as_map(jobs.at(job), ExportFormat::Torchtitan); };

  const auto llama70 = mg("llama70b-example");
  EXPECT_EQ(llama70.at("--tensor-model-parallel-size"), "4");
  EXPECT_EQ(llama70.at("--pipeline-model-parallel-size"), "4");
  EXPECT_EQ(llama70.at("--num-layers-per-virtual-pipeline-stage"), "4");  // 80 / (4 * 5)
  EXPECT_TRUE(llama70.count("--sequence-parallel"));
  EXPECT_TRUE(llama70.count("--use-distributed-optimizer"));
  EXPECT_EQ(llama70.at("--num-query-groups"), "8");
  EXPECT_EQ(llama70.at("--global-batch-size"), "128");
  EXPECT_EQ(nm("llama70b-example").at("model.virtual_pipeline_model_parallel_size"), "5");
  EXPECT_EQ(tt("llama70b-example").at("parallelism.pipeline_parallel_schedule"),
            "\"Interleaved1F1B\"");
  EXPECT_EQ(tt("llama70b-example").at("parallelism.pipeline_parallel_layers_per_stage"), "4");

  const auto gpt3 = mg("gpt3-example");
  EXPECT_EQ(gpt3.at("--position-embedding-type"), "learned_absolute");
  EXPECT_FALSE(gpt3.count("--swiglu"));
  EXPECT_FALSE(gpt3.count("--untie-embeddings-and-output-weights"));

  EXPECT_EQ(mg("zero3").at("--data-parallel-sharding-strategy"), "optim_grads_params");
  EXPECT_EQ(nm("zero3").at("ddp.data_parallel_sharding_strategy"), "optim_grads_params");
  EXPECT_EQ(tt("zero3").at("parallelism.data_parallel_shard_degree"), "16");
  EXPECT_EQ(tt("zero2-hybrid").at("parallelism.data_parallel_shard_degree"), "4");
  EXPECT_EQ(tt("zero2-hybrid").at("parallelism.data_parallel_replicate_degree"), "2");
  EXPECT_EQ(tt("zero2-hybrid").at("parallelism.fsdp_reshard_after_forward"), "\"never\"");
  EXPECT_EQ(tt("zero3").at("parallelism.fsdp_reshard_after_forward"), "\"always\"");
  // torchtitan's own models, matched by shape; its split made parplan's.
  EXPECT_EQ(tt("llama70b-example").at("model.name"), "\"llama3\"");
  EXPECT_EQ(tt("llama70b-example").at("model.flavor"), "\"70B\"");
  EXPECT_EQ(tt("deepseek-v3").at("model.flavor"), "\"671B\"");
  EXPECT_EQ(tt("llama70b-example").at("parallelism.pipeline_parallel_first_stage_less_layers"),
            "0");
  EXPECT_EQ(tt("uneven-other")
                .at("parallelism.module_fqns_per_model_part")
                .rfind(R"([["tok_embeddings", "layers.0", "layers.1",)", 0),
            0u);
  EXPECT_FALSE(tt("gpt3-example").count("model.name"));
  EXPECT_EQ(mg("zero1-instances").at("--num-distributed-optimizer-instances"), "4");
  EXPECT_FALSE(mg("zero0").count("--use-distributed-optimizer"));
  EXPECT_EQ(nm("zero0").at("ddp.use_distributed_optimizer"), "false");

  EXPECT_EQ(mg("recompute-full").at("--recompute-granularity"), "full");
  EXPECT_EQ(mg("recompute-full").at("--recompute-method"), "uniform");
  EXPECT_EQ(tt("recompute-full").at("activation_checkpoint.mode"), "\"full\"");
  EXPECT_EQ(tt("recompute-selective").at("activation_checkpoint.mode"), "\"selective\"");
  EXPECT_EQ(mg("fp8").at("--fp8-format"), "hybrid");
  EXPECT_EQ(mg("fp8").at("--fp8-recipe"), "tensorwise");
  // The modelled fp8 layout: fp8 parameters gathered in fp8, per-tensor scaled on Hopper,
  // MXFP8 through the gradient buffer on Blackwell (Megatron-Bridge bf16_with_mxfp8_mixed).
  EXPECT_TRUE(mg("fp8").count("--fp8-param-gather"));
  EXPECT_FALSE(mg("fp8").count("--reuse-grad-buf-for-mxfp8-param-ag"));
  // Megatron gathers fp8 parameters only with a distributed optimizer or FSDP.
  EXPECT_FALSE(mg("fp8-zero0").count("--fp8-param-gather"));
  EXPECT_EQ(nm("fp8-zero0").at("mixed_precision.fp8_param_gather"), "false");
  EXPECT_TRUE(mg("fp8-blackwell").count("--fp8-param-gather"));
  EXPECT_TRUE(mg("fp8-blackwell").count("--reuse-grad-buf-for-mxfp8-param-ag"));
  EXPECT_EQ(mg("fp8-blackwell").at("--fp8-recipe"), "mxfp8");
  EXPECT_EQ(nm("fp8").at("mixed_precision.fp8_recipe"), "tensorwise");
  EXPECT_EQ(nm("fp8").at("mixed_precision.fp8_param_gather"), "true");
  EXPECT_EQ(nm("fp8-blackwell").at("mixed_precision.fp8_recipe"), "mxfp8");
  EXPECT_EQ(nm("fp8-blackwell").at("mixed_precision.fp8_param_gather"), "true");
  EXPECT_EQ(nm("fp8-blackwell").at("mixed_precision.reuse_grad_buf_for_mxfp8_param_ag"), "true");
  // Megatron-FSDP gathers MXFP8 parameters without the gradient buffer: Megatron gets no reuse
  // flag; Bridge gets it and turns it off itself (it asserts it without FSDP only since v0.5.0).
  EXPECT_TRUE(mg("fp8-blackwell-zero3").count("--fp8-param-gather"));
  EXPECT_FALSE(mg("fp8-blackwell-zero3").count("--reuse-grad-buf-for-mxfp8-param-ag"));
  EXPECT_EQ(nm("fp8-blackwell-zero3").at("mixed_precision.fp8_param_gather"), "true");
  EXPECT_EQ(nm("fp8").at("mixed_precision.reuse_grad_buf_for_mxfp8_param_ag"), "false");
  EXPECT_EQ(nm("bf16-default").at("mixed_precision"), "bf16_mixed");
  EXPECT_EQ(tt("fp8").at("model.converters"), "[\"quantize.linear.float8\"]");
  EXPECT_EQ(tt("fp8-blackwell").at("model.converters"), "[\"quantize.linear.mx\"]");
  EXPECT_TRUE(mg("fp16").count("--fp16"));
  EXPECT_EQ(nm("fp16").at("mixed_precision"), "fp16_mixed");
  EXPECT_FALSE(mg("fp32").count("--bf16"));
  EXPECT_EQ(mg("cp2").at("--context-parallel-size"), "2");
  EXPECT_EQ(tt("cp2").at("parallelism.context_parallel_degree"), "2");
  EXPECT_TRUE(mg("order-pp-dp").count("--use-tp-pp-dp-mapping"));
  EXPECT_EQ(nm("order-pp-dp").at("dist.use_tp_pp_dp_mapping"), "true");
  EXPECT_EQ(tt("gpipe").at("parallelism.pipeline_parallel_schedule"), "\"GPipe\"");
  EXPECT_EQ(mg("uneven-first-last").at("--decoder-first-pipeline-num-layers"), "6");
  EXPECT_EQ(mg("uneven-first-last").at("--decoder-last-pipeline-num-layers"), "6");
  EXPECT_EQ(nm("uneven-first-last").at("model.num_layers_in_first_pipeline_stage"), "6");
  EXPECT_EQ(nm("vpp-uneven").at("model.pipeline_model_parallel_layout"),
            "\"Et*5|t*5|t*6|t*6|t*5|t*5L\"");
  EXPECT_EQ(nm("zero3").at("checkpoint.ckpt_format"), "fsdp_dtensor");
  EXPECT_EQ(nm("zero0").at("checkpoint.ckpt_format"), "torch_dist");
  // 32 layers in 6 chunks: the two middle ones take the extra layers.
  EXPECT_EQ(mg("vpp-uneven").at("--pipeline-model-parallel-layout"), "Et*5|t*5|t*6|t*6|t*5|t*5L");
  EXPECT_EQ(mg("uneven-other").at("--pipeline-model-parallel-layout"), "Et*7|t*9|t*8|t*8L");
  EXPECT_EQ(nm("lora").at("peft.dim"), "16");
  // torchtitan: pipelining splits the local batch into micro-batches; without it the
  // micro-batches are accumulation steps of local_batch_size.
  EXPECT_EQ(tt("torchtitan").at("training.local_batch_size"), "16");  // 64 / dp 4
  EXPECT_EQ(tt("zero3").at("training.local_batch_size"), "1");
  // torch.compile as the job says, written either way.
  EXPECT_EQ(tt("torchtitan").at("compile.enable"), "false");
  EXPECT_EQ(tt("torchtitan-compile").at("compile.enable"), "true");

  const auto ds = mg("deepseek-v3");
  EXPECT_EQ(ds.at("--moe-layer-freq"), "([0]*3+[1]*58)");
  EXPECT_EQ(ds.at("--num-experts"), "256");
  EXPECT_EQ(ds.at("--moe-router-topk"), "8");
  EXPECT_EQ(ds.at("--moe-shared-expert-intermediate-size"), "2048");
  EXPECT_EQ(ds.at("--expert-model-parallel-size"), "8");
  // ep 8 over tp 2 spans two H100 nodes: "auto" is Megatron-Core's DeepEP.
  EXPECT_EQ(ds.at("--moe-token-dispatcher-type"), "flex");
  EXPECT_EQ(ds.at("--moe-flex-dispatcher-backend"), "deepep");
  EXPECT_TRUE(ds.count("--multi-latent-attention"));
  EXPECT_EQ(ds.at("--q-lora-rank"), "1536");
  EXPECT_EQ(ds.at("--qk-pos-emb-head-dim"), "64");
  EXPECT_FALSE(ds.count("--kv-channels"));
  EXPECT_EQ(tt("deepseek-v3").at("parallelism.expert_parallel_degree"), "8");
  // Mixtral with ep 8 over dp*cp = 4: experts leave tensor parallelism (expert tp 1).
  EXPECT_EQ(mg("mixtral-ep").at("--expert-tensor-parallel-size"), "1");
  EXPECT_EQ(nm("mixtral-ep").at("model.expert_tensor_parallel_size"), "1");
}

// The MoE dispatcher the time model resolved and the batch-level overlap: Megatron-LM flags,
// Bridge fields (written either way), torchtitan's backend where it has one.
TEST(Export, MoeDispatcherAndOverlapFollowThePlan) {
  const auto jobs = variant_jobs();
  auto mg = [&](const char* job) { return as_map(jobs.at(job), ExportFormat::Megatron); };
  auto nm = [&](const char* job) { return as_map(jobs.at(job), ExportFormat::Nemo); };
  ASSERT_EQ(cost::resolved_moe_dispatcher(jobs.at("qwen3-235b-deepep")), MoeDispatcher::DeepEP);

  const auto deepep = mg("qwen3-235b-deepep");
  EXPECT_EQ(deepep.at("--expert-model-parallel-size"), "32");
  EXPECT_EQ(deepep.at("--moe-token-dispatcher-type"), "flex");
  EXPECT_EQ(deepep.at("--moe-flex-dispatcher-backend"), "deepep");
  EXPECT_FALSE(deepep.count("--overlap-moe-expert-parallel-comm"));
  EXPECT_FALSE(deepep.count("--delay-wgrad-compute"));
  const std::string plain = tools::export_megatron(jobs.at("qwen3-235b-deepep"));
  EXPECT_NE(plain.find("export CUDA_DEVICE_MAX_CONNECTIONS=1 "), std::string::npos);

  const auto overlap = mg("qwen3-235b-overlap");
  EXPECT_EQ(overlap.at("--moe-token-dispatcher-type"), "flex");
  EXPECT_EQ(overlap.at("--moe-flex-dispatcher-backend"), "deepep");
  EXPECT_TRUE(overlap.count("--overlap-moe-expert-parallel-comm"));
  EXPECT_TRUE(overlap.count("--delay-wgrad-compute"));
  const std::string overlapped = tools::export_megatron(jobs.at("qwen3-235b-overlap"));
  EXPECT_NE(overlapped.find("export CUDA_DEVICE_MAX_CONNECTIONS=32 "), std::string::npos);
  EXPECT_EQ(overlapped.find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos);
  EXPECT_EQ(mg("qwen3-235b-hybridep").at("--moe-flex-dispatcher-backend"), "hybridep");
  // A plan that names the all-to-all gets it across nodes too.
  Job alltoall = jobs.at("qwen3-235b-deepep");
  alltoall.plan.moe_dispatcher = MoeDispatcher::AllToAll;
  EXPECT_EQ(as_map(alltoall, ExportFormat::Megatron).at("--moe-token-dispatcher-type"), "alltoall");
  EXPECT_FALSE(as_map(alltoall, ExportFormat::Megatron).count("--moe-flex-dispatcher-backend"));
  EXPECT_EQ(as_map(alltoall, ExportFormat::Nemo).at("model.moe_flex_dispatcher_backend"), "null");

  const auto n_plain = nm("qwen3-235b-deepep");
  EXPECT_EQ(n_plain.at("model.moe_token_dispatcher_type"), "flex");
  EXPECT_EQ(n_plain.at("model.moe_flex_dispatcher_backend"), "deepep");
  EXPECT_EQ(n_plain.at("comm_overlap._target_"),
            "megatron.bridge.training.comm_overlap.CommOverlapConfig");
  EXPECT_EQ(n_plain.at("comm_overlap.overlap_moe_expert_parallel_comm"), "false");
  EXPECT_EQ(n_plain.at("comm_overlap.delay_wgrad_compute"), "false");
  EXPECT_FALSE(n_plain.count("env_vars.CUDA_DEVICE_MAX_CONNECTIONS"));
  const auto n_overlap = nm("qwen3-235b-overlap");
  EXPECT_EQ(n_overlap.at("comm_overlap.overlap_moe_expert_parallel_comm"), "true");
  EXPECT_EQ(n_overlap.at("comm_overlap.delay_wgrad_compute"), "true");
  EXPECT_EQ(n_overlap.at("env_vars.CUDA_DEVICE_MAX_CONNECTIONS"), "32");
  EXPECT_EQ(n_overlap.at("model.moe_shared_expert_overlap"), "false");
  EXPECT_EQ(n_overlap.at("model.recompute_method"), "null");
  EXPECT_EQ(nm("qwen3-235b-hybridep").at("model.moe_flex_dispatcher_backend"), "hybridep");
  // The comm_overlap section is built once (one _target_, one tp_comm_overlap).
  const std::string yaml = tools::export_nemo(jobs.at("qwen3-235b-overlap"));
  EXPECT_EQ(yaml.find("\ncomm_overlap:"), yaml.rfind("\ncomm_overlap:"));
  EXPECT_EQ(yaml.find("_target_: megatron.bridge.training.comm_overlap"),
            yaml.rfind("_target_: megatron.bridge.training.comm_overlap"));
  EXPECT_EQ(yaml.find("tp_comm_overlap:"), yaml.rfind("tp_comm_overlap:"));

  // torchtitan has no batch-level overlap: refused, nearest plan without it. v0.2.2 runs
  // DeepEP only for deepseek_v3 (without expert tp): qwen3's resolved DeepEP is refused there
  // and set on main (model_registry(moe_comm_backend=...)).
  Job tt = jobs.at("qwen3-235b-overlap");
  tt.plan.zero_stage = 3;  // past the ZeRO-1 refusal
  const auto overlap_refusal = tools::torchtitan_refusal(tt);
  ASSERT_TRUE(overlap_refusal.has_value());
  EXPECT_EQ(overlap_refusal->key, "plan.moe_a2a_overlap");
  ASSERT_TRUE(overlap_refusal->nearest.has_value());
  EXPECT_FALSE(overlap_refusal->nearest->moe_a2a_overlap);
  EXPECT_EQ(tools::torchtitan_main_refusal(tt)->key, "plan.moe_a2a_overlap");
  tt.plan = *overlap_refusal->nearest;
  const auto dispatcher_refusal = tools::torchtitan_refusal(tt);
  ASSERT_TRUE(dispatcher_refusal.has_value());
  EXPECT_EQ(dispatcher_refusal->key, "plan.moe_dispatcher");
  EXPECT_EQ(dispatcher_refusal->nearest->moe_dispatcher, MoeDispatcher::AllToAll);
  EXPECT_FALSE(tools::torchtitan_main_refusal(tt).has_value());
  EXPECT_NE(tools::export_torchtitan_main(tt).find(
                R"(model_registry("235B-A22B", moe_comm_backend="deepep"))"),
            std::string::npos);
  tt.plan = *dispatcher_refusal->nearest;
  EXPECT_FALSE(tools::torchtitan_refusal(tt).has_value());
  EXPECT_EQ(as_map(tt, ExportFormat::Torchtitan).at("parallelism.expert_parallel_comm_backend"),
            "\"standard\"");
  const Job& ds = jobs.at("deepseek-v3-deepep-etp1");
  EXPECT_FALSE(tools::torchtitan_refusal(ds).has_value());
  EXPECT_EQ(as_map(ds, ExportFormat::Torchtitan).at("parallelism.expert_parallel_comm_backend"),
            "\"deepep\"");
  // A torchtitan job's "auto" is the all-to-all.
  Job titan = jobs.at("qwen3-235b-deepep");
  titan.framework = Framework::Torchtitan;
  EXPECT_EQ(cost::resolved_moe_dispatcher(titan), MoeDispatcher::AllToAll);
  // Megatron-Core refuses the overlap in an fp32 model.
  Job fp32 = jobs.at("qwen3-235b-overlap");
  fp32.training.precision = Precision::Fp32;
  const auto fp32_refusal = tools::megatron_refusal(fp32);
  ASSERT_TRUE(fp32_refusal.has_value());
  EXPECT_EQ(fp32_refusal->key, "plan.moe_a2a_overlap");
  EXPECT_EQ(tools::nemo_refusal(fp32)->key, "plan.moe_a2a_overlap");
}

// Megatron-LM and Megatron-Bridge refuse what they cannot run (megatron_rules_test.cpp,
// nemo_rules_test.cpp); torchtitan notes what changes no cost.
TEST(Export, KeysWithoutAnEquivalentBecomeComments) {
  const auto jobs = variant_jobs();
  auto text = [&](const char* job, ExportFormat f) {
    return tools::export_launch_settings(jobs.at(job), f);
  };
  EXPECT_NE(text("lora", ExportFormat::Torchtitan).find("no LoRA keys"), std::string::npos);
  EXPECT_NE(text("fp16", ExportFormat::Torchtitan).find("# precision fp16"), std::string::npos);
  EXPECT_NE(text("no-sp", ExportFormat::Torchtitan).find("# sequence_parallel false"),
            std::string::npos);
  EXPECT_NE(text("no-plan", ExportFormat::Megatron).find("has no plan"), std::string::npos);
  EXPECT_EQ(as_map(jobs.at("sft"), ExportFormat::Nemo).at("checkpoint.pretrained_checkpoint"),
            "<PRETRAINED_CHECKPOINT_DIR>");
}

// The export formats each framework description names are formats parplan writes; a job whose
// framework no format launches is told that the settings are for another framework.
TEST(Export, FrameworkDescriptionsNameRealFormatsAndOthersGetANote) {
  std::set<std::string> named;
  for (const FrameworkDescription* d : all_frameworks()) {
    for (std::string_view format : d->export_formats) {
      EXPECT_TRUE(tools::parse_export_format(format).has_value()) << d->name << ": " << format;
      named.insert(std::string(format));
    }
  }
  EXPECT_EQ(named, (std::set<std::string>{"megatron", "nemo", "torchtitan"}));

  const std::string plan = R"("model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 1}, "training": {"global_batch_size": 64, "seq_length": 4096},
      "plan": {"tp": 1, "zero_stage": 1})";
  for (const FrameworkDescription* d : all_frameworks()) {
    const Job job = job_from(R"({"framework": ")" + std::string(d->name) + R"(", )" + plan + "}");
    const std::string text = tools::export_launch_settings(job, ExportFormat::Megatron);
    const bool noted = text.find("# note: the job's framework is") != std::string::npos;
    EXPECT_EQ(noted, d->export_formats.empty()) << d->name << "\n" << text;
  }
}

// What the planner recommends must launch unmodified: for every framework with an export
// format, the plans the planner ranks first (with `parplan plan`'s memory headroom) export in
// each of the framework's formats without a refusal of a plan key (a model the framework does
// not ship is the job's, not the planner's: the same refusal for every plan). Dense
// and MoE, A100 to GB200, 8 to 1,024 GPUs. 24 searches per framework: CI runs it in its
// Release build (RELEASE_CASES in tests/tools/CMakeLists.txt).
TEST(Export, EveryFrameworksRecommendedPlansExportWithoutAPlanRefusal) {
  const std::vector<std::string> setups = {
      R"("model": "llama3.1-70b", "cluster": {"node": "dgx-h100", "num_nodes": 16},
         "training": {"global_batch_size": 512, "seq_length": 8192})",
      R"("model": "mixtral-8x7b", "cluster": {"node": "dgx-h100", "num_nodes": 8},
         "training": {"global_batch_size": 256, "seq_length": 4096})",
      R"("model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 1},
         "training": {"global_batch_size": 128, "seq_length": 8192, "precision": "bf16"})",
      R"("model": "llama3.1-405b", "cluster": {"node": "dgx-h100", "num_nodes": 64},
         "training": {"global_batch_size": 1024, "seq_length": 8192, "precision": "bf16"})",
      R"("model": "deepseek-v3", "cluster": {"node": "dgx-h100", "num_nodes": 128},
         "training": {"global_batch_size": 4096, "seq_length": 4096, "precision": "fp8"})",
      R"("model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100", "num_nodes": 4},
         "training": {"global_batch_size": 256, "seq_length": 4096, "precision": "bf16"})",
      R"("model": "nemotron4-340b", "cluster": {"node": "dgx-h100", "num_nodes": 48},
         "training": {"global_batch_size": 768, "seq_length": 4096, "precision": "bf16"})",
      R"("model": "gpt3-175b", "cluster": {"node": "dgx-a100-80gb", "num_nodes": 32},
         "training": {"global_batch_size": 1536, "seq_length": 2048, "precision": "bf16"})",
      R"("model": "qwen2.5-72b", "cluster": {"node": "dgx-b200", "num_nodes": 8},
         "training": {"global_batch_size": 256, "seq_length": 4096, "precision": "fp8"})",
      R"("model": "llama3.1-70b", "cluster": {"node": "gb200-nvl72", "num_nodes": 8},
         "training": {"global_batch_size": 1152, "seq_length": 8192, "precision": "fp8"})",
      R"("model": "mixtral-8x22b", "cluster": {"node": "dgx-h100", "num_nodes": 16},
         "training": {"global_batch_size": 1024, "seq_length": 4096, "precision": "bf16"})",
      R"("model": "bloom-176b", "cluster": {"node": "dgx-a100-80gb", "num_nodes": 48},
         "training": {"global_batch_size": 1536, "seq_length": 4096, "precision": "bf16"})"};
  // The plans `parplan plan` lists (its 10 best distinct layouts) and every variant of the 30
  // best (those `plan` folds into its rows).
  std::vector<planner::SearchOptions> searches(2);
  searches[0].top_k = 10;
  searches[0].distinct = true;
  searches[1].top_k = 30;
  for (planner::SearchOptions& options : searches) {
    options.max_memory_fraction = planner::recommended_max_memory_fraction();
    options.threads = 2;
  }
  std::set<std::string> job_refusals;  // "framework model format: key"
  for (const FrameworkDescription* d : all_frameworks()) {
    if (d->export_formats.empty()) continue;
    for (const std::string& setup : setups) {
      const Job base =
          job_from(R"({"framework": ")" + std::string(d->name) + R"(", )" + setup + "}");
      for (const planner::SearchOptions& options : searches) {
        Job job = base;
        const planner::SearchResult result = planner::search_plans(job, options);
        ASSERT_FALSE(result.top.empty()) << d->name << " " << job.model.name;
        // A refusal of the job (its model, its training) is the same for every plan: per
        // format, the first plan's outcome ("" exported, else the refused key) is every plan's.
        std::map<std::string, std::string> outcome;
        for (const planner::RankedPlan& ranked : result.top) {
          job.plan = ranked.plan;
          job.plan_given = true;
          for (std::string_view name : d->export_formats) {
            const auto refusal = tools::export_refusal(job, *tools::parse_export_format(name));
            const std::string where = std::string(d->name) + " " + job.model.name + " " +
                                      tools::plan_summary(ranked.plan) + ": " + std::string(name);
            const std::string key = refusal ? refusal->key : "";
            EXPECT_EQ(outcome.try_emplace(std::string(name), key).first->second, key) << where;
            if (refusal) {
              EXPECT_NE(key.rfind("plan.", 0), 0u)
                  << where << " refuses " << key << " " << refusal->found;
              job_refusals.insert(std::string(d->name) + " " + job.model.name + " " +
                                  std::string(name) + ": " + key);
            }
          }
        }
      }
    }
  }
  // What the frameworks cannot run whatever the plan: Megatron-Core has no ALiBi; torchtitan
  // ships Llama 3, DeepSeek-V3 and Qwen3 (its model registry), not the others.
  EXPECT_EQ(job_refusals, (std::set<std::string>{
                              "megatron-core bloom-176b megatron: model.position_embedding",
                              "megatron-core bloom-176b nemo: model.position_embedding",
                              "megatron-lm bloom-176b megatron: model.position_embedding",
                              "torchtitan bloom-176b torchtitan: model",
                              "torchtitan gpt3-175b torchtitan: model",
                              "torchtitan mixtral-8x22b torchtitan: model",
                              "torchtitan mixtral-8x7b torchtitan: model",
                              "torchtitan nemotron4-340b torchtitan: model",
                              "torchtitan qwen2.5-72b torchtitan: model",
                          }));
}

// torchtitan spreads experts over FSDP's shard group x cp (parallel_dims.py): ep 4 over shards
// of 2 (HSDP) or over replicated DDP ranks is refused, with full sharding as the nearest plan.
TEST(Export, TorchtitanTakesExpertsFromTheShardedRanks) {
  const std::string setup = R"("framework": "torchtitan", "model": "qwen3-30b-a3b",
      "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": )";
  const Job hsdp = job_from("{" + setup + R"({"tp": 1, "ep": 4, "zero_stage": 3,
      "zero_shard_size": 2, "micro_batch_size": 1}})");
  const auto refusal = tools::torchtitan_refusal(hsdp);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->key, "plan.ep");
  EXPECT_NE(refusal->supported.find("= 2"), std::string::npos) << refusal->supported;
  ASSERT_TRUE(refusal->nearest.has_value());
  Job nearest = hsdp;
  nearest.plan = *refusal->nearest;
  EXPECT_FALSE(tools::torchtitan_refusal(nearest).has_value());
  const Job ddp = job_from("{" + setup + R"({"tp": 1, "ep": 4, "zero_stage": 0,
      "micro_batch_size": 1}})");
  ASSERT_TRUE(tools::torchtitan_refusal(ddp).has_value());
  EXPECT_EQ(tools::torchtitan_refusal(ddp)->key, "plan.ep");
  const Job sharded = job_from("{" + setup + R"({"tp": 1, "ep": 4, "zero_stage": 3,
      "zero_shard_size": 4, "micro_batch_size": 1}})");
  EXPECT_FALSE(tools::torchtitan_refusal(sharded).has_value());
}

// (name, value) pairs of a torchtitan main Python config (launch_torchtitan_main.cpp).
std::vector<std::pair<std::string, std::string>> python_names(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  bool in_parallelism = false;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t.rfind("from ", 0) == 0) {
      const auto import = t.find(" import ");
      const std::string module = t.substr(5, import - 5);
      std::istringstream names(t.substr(import + 8));
      std::string name;
      while (std::getline(names, name, ',')) out.emplace_back("import:" + module, trim(name));
    } else if (t.rfind("config.parallelism = ParallelismConfig(", 0) == 0) {
      in_parallelism = true;
      out.emplace_back("config.parallelism", "");
    } else if (in_parallelism && t == ")") {
      in_parallelism = false;
    } else if (in_parallelism) {
      const auto eq = t.find('=');
      out.emplace_back("parallelism." + t.substr(0, eq), t.substr(eq + 1, t.size() - eq - 2));
    } else if (t.rfind("config.training.", 0) == 0) {
      const auto eq = t.find(" = ");
      out.emplace_back(t.substr(7, eq - 7), t.substr(eq + 3));
    } else if (t.rfind("config.", 0) == 0 && t.find(" = ") != std::string::npos) {
      const auto eq = t.find(" = ");
      std::string value = t.substr(eq + 3);
      if (const auto hash = value.find("  #"); hash != std::string::npos)
        value = value.substr(0, hash);
      out.emplace_back(t.substr(0, eq), value);
    }
  }
  return out;
}

// torchtitan main: every name is in the list from b5bcd76c; the version is named; batches are
// in tokens; main refuses experts with tensor parallelism.
// `refuse` (torchtitan_refusal or torchtitan_main_refusal) refuses `job` on `key`, names a
// nearest plan with expert tensor parallelism `etp`, and accepts that plan.
using Refusal = std::optional<tools::ExportRefusal> (*)(const Job&);
void expect_nearest_etp_runs(Refusal refuse, const Job& job, const std::string& key, int64_t etp) {
  const auto refusal = refuse(job);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->key, key);
  ASSERT_TRUE(refusal->nearest.has_value());
  EXPECT_EQ(refusal->nearest->etp, etp);
  Job nearest = job;
  nearest.plan = *refusal->nearest;
  EXPECT_FALSE(refuse(nearest).has_value());
}

TEST(Export, TorchtitanMainNamesAreDocumented) {
  const FlagList list = load_list("torchtitan_main_keys.txt");
  int exported = 0;
  for (auto [name, job] : variant_jobs()) {
    for (int round = 0; round < 4; ++round) {  // the nearest plan main runs, if any
      const auto refusal = tools::torchtitan_main_refusal(job);
      if (!refusal || !refusal->nearest) break;
      job.plan = *refusal->nearest;
    }
    if (tools::torchtitan_main_refusal(job)) continue;
    const std::string text = tools::export_torchtitan_main(job);
    EXPECT_NE(text.find("torchtitan main (pytorch/torchtitan b5bcd76c)"), std::string::npos);
    ++exported;
    for (const auto& [key, value] : python_names(text)) {
      auto it = list.find(key);
      ASSERT_NE(it, list.end()) << name << ": " << key << "\n" << text;
      if (!it->second.empty() && !value.empty()) {
        EXPECT_TRUE(it->second.count(value)) << name << ": " << key << " = " << value;
      }
    }
  }
  EXPECT_GE(exported, 15);
  std::map<std::string, std::string> llama70;
  for (const auto& [k, v] : python_names(tools::export_torchtitan_main(load_job(
           std::string(PARPLAN_SOURCE_DIR) + "/tools/examples/llama3.1-70b-dgx-h100.json")))) {
    llama70[k] = v;
  }
  EXPECT_EQ(llama70.at("training.max_context_length"), "8192");
  EXPECT_EQ(llama70.at("parallelism.pipeline_parallel_schedule"), "\"Interleaved1F1B\"");
  EXPECT_EQ(llama70.at("config.model_spec"), "model_registry(\"70B\")");
  // Written either way, also where the job leaves it unset (main's llama3_405b baseline would
  // compile).
  EXPECT_EQ(llama70.at("config.compile"), "CompileConfig(enable=False)");
  std::map<std::string, std::string> compiled;
  for (const auto& [k, v] :
       python_names(tools::export_torchtitan_main(variant_jobs().at("torchtitan-compile")))) {
    compiled[k] = v;
  }
  EXPECT_EQ(compiled.at("config.compile"), "CompileConfig(enable=True)");
  // v0.2.2's MXFP8 converter refuses a compiled model with tp > 1; main runs it, and its
  // converters learn that the model is compiled.
  const Job mx = job_from(R"({"framework": "torchtitan", "model": "llama3.1-8b",
      "cluster": {"node": "dgx-b200", "num_nodes": 1}, "training": {"global_batch_size": 64,
      "seq_length": 4096, "precision": "fp8", "torch_compile": true},
      "plan": {"tp": 2, "zero_stage": 3}})");
  const auto mx_refusal = tools::torchtitan_refusal(mx);
  ASSERT_TRUE(mx_refusal.has_value());
  EXPECT_EQ(mx_refusal->key, "training.torch_compile");
  EXPECT_FALSE(tools::torchtitan_main_refusal(mx).has_value());
  EXPECT_NE(tools::export_torchtitan_main(mx).find(
                "MXFP8LinearConverter.Config(model_compile_enabled=True)"),
            std::string::npos);
  // Mixtral is no torchtitan model; DeepSeek-V3 with tp 2 and ep inside dp keeps expert tp.
  EXPECT_EQ(tools::torchtitan_main_refusal(variant_jobs().at("mixtral-ep"))->key, "model");
  Job deepseek = variant_jobs().at("deepseek-v3");
  deepseek.plan.zero_stage = 3;  // past the ZeRO-1 refusal
  // Its nearest plan runs the experts without tensor parallelism, and main exports it.
  expect_nearest_etp_runs(tools::torchtitan_main_refusal, deepseek, "plan.ep", 1);
}

// v0.2.2's ParallelDims._validate: with ep > 1, "Currently we only support ETP=TP or ETP=1";
// without expert parallelism the experts take tp.
TEST(Export, TorchtitanRunsExpertTensorParallelismOfOneOrTp) {
  const std::string setup = R"("framework": "torchtitan", "model": "qwen3-30b-a3b",
      "cluster": {"node": "dgx-h100", "num_nodes": 2},
      "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": {"tp": 4, "ep": 4,
      "zero_stage": 3, "micro_batch_size": 1, "etp": )";
  const Job two = job_from("{" + setup + "2}}");
  ASSERT_TRUE(tools::torchtitan_refusal(two).has_value());
  EXPECT_EQ(tools::torchtitan_refusal(two)->found, "2 with tp 4");
  expect_nearest_etp_runs(tools::torchtitan_refusal, two, "plan.etp", 4);
  for (const char* etp : {"1", "4"}) {
    EXPECT_FALSE(tools::torchtitan_refusal(job_from("{" + setup + etp + "}}")).has_value()) << etp;
  }
  // Without expert parallelism the experts run on the tensor-parallel mesh whatever etp says
  // (apply_moe_ep_tp): etp tp only, nearest tp.
  Job no_ep = two;
  no_ep.plan.ep = 1;
  for (const int64_t etp : {1, 2}) {
    SCOPED_TRACE(etp);
    no_ep.plan.etp = etp;
    expect_nearest_etp_runs(tools::torchtitan_refusal, no_ep, "plan.etp", 4);
  }
  no_ep.plan.etp = 4;
  EXPECT_FALSE(tools::torchtitan_refusal(no_ep).has_value());
  // ep 8 does not divide the 4 sharded ranks experts with tensor parallelism take: the nearest
  // plan runs them without (etp 1 over dp 4 x tp 4).
  Job wide = two;
  wide.plan.ep = 8;
  expect_nearest_etp_runs(tools::torchtitan_refusal, wide, "plan.etp", 1);
  // torchtitan main has no expert tensor parallelism: its nearest plan is etp 1, which it runs.
  for (const Job& job : {two, wide}) {
    SCOPED_TRACE(job.plan.ep);
    expect_nearest_etp_runs(tools::torchtitan_main_refusal, job, "plan.ep", 1);
  }
}

TEST(Export, MoeLayerPatternIsRunLengthEncoded) {
  EXPECT_EQ(tools::launch::megatron_pattern_expression({0, 0, 0, 1, 1}), "([0]*3+[1]*2)");
  EXPECT_EQ(tools::launch::megatron_pattern_expression({1, 0, 1, 0}), "([1]*1+[0]*1+[1]*1+[0]*1)");
  EXPECT_FALSE(tools::parse_export_format("deepspeed").has_value());
  EXPECT_EQ(tools::parse_export_format("nemo"), ExportFormat::Nemo);
}

}  // namespace
}  // namespace parplan::testing
