// parplan import: export then import gives back the same plan and model, for the planner's top
// plans of twenty jobs (tools/examples and presets) in all three formats (after the nearest
// plan where a format refuses one); the readers' forms (shell scripts, hand-written YAML and
// TOML) and their errors naming FILE:LINE; the CLI lists settings it does not read.
#include <gtest/gtest.h>

#include "core/check.h"
#include "core/job.h"
#include "cost_models/moe_dispatch.h"
#include "planner/search.h"
#include "tests/tools/launch_rules_jobs.h"
#include "tests/tools/qwen3_235b_job.h"
#include "tests/tools/test_support.h"
#include "tools/import/import_job.h"

namespace parplan::testing {
namespace {

using tools::ExportFormat;

Job job_from(const std::string& text) { return launch_job_from(text); }

std::string error_of(ExportFormat format, const std::string& text, tools::ImportOptions o);

// The plan as the launch can state it: keys with no effect dropped (sequence parallelism
// without tp, the schedule without pp, a shard group of all of dp, the MoE dispatcher without
// expert parallelism), the MoE dispatcher as the job's framework resolves it (a launch names
// the dispatcher, not whether the plan chose it or left it to "auto").
Json comparable_plan(const Job& job, ExportFormat format) {
  ParallelPlan p = job.plan;
  p.moe_dispatcher = p.ep > 1 ? cost::resolved_moe_dispatcher(job) : MoeDispatcher::Auto;
  p.sequence_parallel = p.sequence_parallel && p.tp > 1;
  if (p.pp == 1) p.schedule = ScheduleKind::OneFOneB;
  if (p.zero_shard_size == p.dp) p.zero_shard_size = 0;
  if (format == ExportFormat::Torchtitan) {
    p.order = "tp-cp-ep-dp-pp";      // torchtitan builds its own mesh
    p.sequence_parallel = p.tp > 1;  // and shards the sequence with every tp > 1
    if (p.dp == 1) p.zero_stage = 0;
  }
  return parallel_plan_to_json(p);
}

// The model's shape; torchtitan's flavors fix their own RoPE.
Json comparable_model(const ModelSpec& m, ExportFormat format) {
  Json j = model_spec_to_json(m);
  j.erase("name");
  j["qkv_bias"] = m.qkv_bias || m.linear_bias;  // biases everywhere include the qkv ones
  if (format == ExportFormat::Torchtitan) {
    j.erase("rotary_base");
    j.erase("rope_scaling_factor");
  }
  if (m.moe) {
    j["moe"]["shared_expert_ffn_hidden_size"] =
        m.moe->shared_expert_ffn_hidden_size > 0
            ? m.moe->shared_expert_ffn_hidden_size
            : m.moe->num_shared_experts * m.moe->expert_ffn_hidden_size;
    j["moe"].erase("num_shared_experts");
  }
  return j;
}

// Exports the job's plan (or the nearest plan the format runs), imports it and compares.
// Returns false when the format refuses the model itself.
bool round_trip(Job job, ExportFormat format) {
  for (int round = 0; round < 4; ++round) {
    const auto refusal = tools::export_refusal(job, format);
    if (!refusal) break;
    if (!refusal->nearest) return false;
    job.plan = *refusal->nearest;
  }
  const std::string text = tools::export_launch_settings(job, format);
  SCOPED_TRACE(text);
  tools::ImportOptions options;
  options.node = job.cluster.node.name;
  options.num_nodes = job.cluster.num_nodes;
  options.vocab_size = job.model.vocab_size;  // Megatron leaves it to the tokenizer
  const tools::ImportResult imported = tools::import_launch(format, text, "launch", options);
  EXPECT_TRUE(imported.unread.empty()) << imported.unread.front();
  // What parplan exports is what its model assumes: no note of a difference.
  for (const std::string& note : imported.notes) {
    EXPECT_EQ(note.find("parplan"), std::string::npos) << note;
  }
  const Job back = parse_job(imported.job, "imported.json", PARPLAN_SOURCE_DIR);
  EXPECT_EQ(comparable_plan(back, format), comparable_plan(job, format));
  EXPECT_EQ(comparable_model(back.model, format), comparable_model(job.model, format));
  EXPECT_EQ(back.training.global_batch_size, job.training.global_batch_size);
  EXPECT_EQ(back.training.seq_length, job.training.seq_length);
  if (format != ExportFormat::Torchtitan || job.training.precision != Precision::Fp16) {
    EXPECT_EQ(back.training.precision, job.training.precision);
  }
  EXPECT_EQ(back.cluster.num_gpus, job.cluster.num_gpus);
  if (format == ExportFormat::Torchtitan) {
    EXPECT_EQ(back.training.torch_compile.value_or(false),
              job.training.torch_compile.value_or(false));
  }
  return true;
}

// torch.compile comes back from torchtitan's [compile] section only when the model is among
// the compiled components ("model" and "loss" by default).
TEST(Import, TorchtitanCompileComesBackWhenTheModelIsCompiled) {
  const Job job = job_from(R"({"framework": "torchtitan", "model": "llama3.1-8b",
      "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 64, "seq_length": 4096, "torch_compile": true},
      "plan": {"tp": 1, "pp": 1, "zero_stage": 3, "micro_batch_size": 8}})");
  ASSERT_TRUE(round_trip(job, ExportFormat::Torchtitan));
  std::string text = tools::export_launch_settings(job, ExportFormat::Torchtitan);
  const std::string enable = "enable = true\n";
  const auto at = text.find(enable);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + enable.size(), "components = [\"loss\"]\n");
  tools::ImportOptions options;
  options.node = job.cluster.node.name;
  options.num_nodes = job.cluster.num_nodes;
  const tools::ImportResult loss_only =
      tools::import_launch(ExportFormat::Torchtitan, text, "launch", options);
  EXPECT_TRUE(loss_only.unread.empty());
  EXPECT_FALSE(loss_only.job["training"].contains("torch_compile"));
}

TEST(Import, ExportThenImportGivesThePlannersTopPlansBack) {
  std::vector<Job> jobs;
  for (const char* example : {"gpt3-175b-dgx-a100.json", "llama3.1-70b-dgx-h100.json",
                              "llama3.1-405b-16k-h100-run.json", "tiny-gpt-8ranks.json"}) {
    jobs.push_back(load_job(std::string(PARPLAN_SOURCE_DIR) + "/tools/examples/" + example,
                            PlanCheck::EnforceIfGiven));
  }
  for (const std::string& text : {
           job_text("llama3.1-8b", "dgx-h100", 1, 128, 8192),
           job_text("llama3.1-8b", "dgx-b200", 2, 256, 4096, "fp8"),
           job_text("llama3.1-70b", "dgx-h100", 8, 512, 8192, "fp8"),
           job_text("llama3.1-405b", "dgx-h100", 64, 1024, 8192),
           job_text("llama2-7b", "dgx-a100-80gb", 2, 256, 4096),
           job_text("llama2-13b", "dgx-a100-80gb", 4, 512, 4096),
           job_text("llama2-70b", "dgx-a100-80gb", 16, 1024, 4096),
           job_text("mistral-7b", "dgx-h100", 2, 256, 8192),
           job_text("mixtral-8x7b", "dgx-h100", 8, 512, 4096),
           job_text("mixtral-8x22b", "dgx-h100", 16, 1024, 4096),
           job_text("deepseek-v3", "dgx-h100", 128, 4096, 4096, "fp8"),
           job_text("qwen2.5-72b", "dgx-b200", 8, 256, 4096, "fp8"),
           job_text("qwen3-30b-a3b", "dgx-h100", 4, 256, 4096),
           job_text("nemotron4-340b", "dgx-h100", 48, 768, 4096),
           job_text("gpt3-175b", "dgx-h100", 32, 1536, 2048),
           job_text("bloom-176b", "dgx-a100-80gb", 48, 2048, 2048),
       }) {
    jobs.push_back(job_from(text));
  }
  ASSERT_EQ(jobs.size(), 20u);
  int trips = 0;
  for (Job& job : jobs) {
    SCOPED_TRACE(job.model.name + " on " + job.cluster.node.name);
    planner::SearchOptions options;
    options.top_k = 2;
    options.threads = 1;
    const planner::SearchResult result = planner::search_plans(job, options);
    ASSERT_FALSE(result.top.empty());
    for (const planner::RankedPlan& ranked : result.top) {
      job.plan = ranked.plan;
      job.plan_given = true;
      for (ExportFormat format :
           {ExportFormat::Megatron, ExportFormat::Nemo, ExportFormat::Torchtitan}) {
        trips += round_trip(job, format);
      }
    }
  }
  // 20 jobs x 2 plans x 3 formats, less the models a format refuses: BLOOM's ALiBi in
  // Megatron-Core, the 12 jobs whose model torchtitan does not ship.
  EXPECT_GE(trips, 90);
  RecordProperty("round_trips", trips);
}

// Plans the planner rarely ranks first: uneven splits, hybrid sharding, selective recompute.
TEST(Import, ExplicitSplitsAndShardingComeBack) {
  const std::string base = R"("model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 2}, "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": )";
  for (const char* plan : {R"({"pp": 4, "layers_per_stage": [6, 10, 10, 6]})",
                           R"({"pp": 4, "layers_per_stage": [7, 9, 8, 8]})",
                           R"({"pp": 2, "vpp": 3, "micro_batch_size": 1})",
                           // 34 chunks for 32 layers: embedding-only and output-only chunks.
                           R"({"pp": 2, "vpp": 17, "micro_batch_size": 1})",
                           R"({"pp": 4, "layers_per_stage": [0, 16, 16, 0]})",
                           R"({"tp": 2, "zero_stage": 2, "zero_shard_size": 4})",
                           R"({"tp": 2, "zero_stage": 1, "zero_shard_size": 2})",
                           R"({"tp": 2, "pp": 2, "recompute": "selective", "order":
                               "tp-cp-ep-pp-dp"})",
                           R"({"tp": 1, "zero_stage": 3, "recompute": "full"})",
                           R"({"tp": 2, "recompute": "selective", "recompute_modules":
                               ["core_attn", "mlp"]})",
                           R"({"tp": 2, "offload_activation_layers": 8})"}) {
    SCOPED_TRACE(plan);
    const Job job = job_from("{" + base + plan + "}");
    for (ExportFormat format :
         {ExportFormat::Megatron, ExportFormat::Nemo, ExportFormat::Torchtitan}) {
      EXPECT_TRUE(round_trip(job, format));
    }
  }
}

// PyTorch's expandable segments (training.expandable_segments) live in the launching
// environment, which the allocator reads when CUDA starts: the Megatron-LM script exports the
// variable and reads it back; the other formats name it in their header for the launcher.
TEST(Import, ExpandableSegmentsTravelInTheEnvironment) {
  Job job = job_from(R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 64, "seq_length": 4096, "expandable_segments": true},
      "plan": {"tp": 2}})");
  ASSERT_EQ(job.training.expandable_segments, true);
  const std::string script = tools::export_launch_settings(job, ExportFormat::Megatron);
  EXPECT_NE(script.find("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
            std::string::npos);
  tools::ImportOptions options{"dgx-h100", 1, job.model.vocab_size, "."};
  const auto back = tools::import_launch(ExportFormat::Megatron, script, "launch.sh", options);
  EXPECT_TRUE(back.unread.empty());
  EXPECT_EQ(back.job["training"].value("expandable_segments", false), true);
  for (ExportFormat format : {ExportFormat::Nemo, ExportFormat::Torchtitan}) {
    EXPECT_NE(tools::export_launch_settings(job, format)
                  .find("# environment: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
              std::string::npos);
  }
  job.training.expandable_segments = false;
  EXPECT_EQ(tools::export_launch_settings(job, ExportFormat::Megatron).find("PYTORCH_CUDA_ALLOC"),
            std::string::npos);
  const auto plain = tools::import_launch(
      ExportFormat::Megatron, tools::export_launch_settings(job, ExportFormat::Megatron),
      "launch.sh", options);
  EXPECT_FALSE(plain.job["training"].contains("expandable_segments"));
}

// The allocator variable holds comma-separated settings: expandable_segments is read from the
// variable in force (the current name over the deprecated one), the other settings and a
// disagreement between the two names are named in notes, and an unset variable counts as absent.
TEST(Import, AllocatorSettingsAreReadOneByOne) {
  Job job = job_from(R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": {"tp": 2}})");
  const std::string script = tools::export_launch_settings(job, ExportFormat::Megatron);
  tools::ImportOptions options{"dgx-h100", 1, job.model.vocab_size, "."};
  const auto read = [&](const std::string& env) {
    return tools::import_launch(ExportFormat::Megatron, env + "\n" + script, "launch.sh", options);
  };
  const auto joined = [](const std::vector<std::string>& notes) {
    std::string all;
    for (const auto& n : notes) all += n + "\n";
    return all;
  };
  const auto combined =
      read("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,expandable_segments:True");
  EXPECT_EQ(combined.job["training"].value("expandable_segments", false), true);
  EXPECT_NE(joined(combined.notes).find("max_split_size_mb:128 not modelled"), std::string::npos)
      << joined(combined.notes);

  const auto both = read(
      "export PYTORCH_ALLOC_CONF=expandable_segments:False\n"
      "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  EXPECT_EQ(both.job["training"].value("expandable_segments", true), false);
  EXPECT_NE(joined(both.notes).find("differ"), std::string::npos) << joined(both.notes);

  const auto unset = read(
      "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
      "unset PYTORCH_CUDA_ALLOC_CONF");
  EXPECT_FALSE(unset.job["training"].contains("expandable_segments"));
  EXPECT_EQ(joined(unset.notes).find("ALLOC_CONF"), std::string::npos) << joined(unset.notes);

  // PyTorch takes True or False only, and its cudaMallocAsync backend ignores the setting.
  const auto lowercase = read("export PYTORCH_ALLOC_CONF=expandable_segments:true");
  EXPECT_FALSE(lowercase.job["training"].contains("expandable_segments"));
  EXPECT_NE(joined(lowercase.notes).find("rejected by PyTorch"), std::string::npos)
      << joined(lowercase.notes);
  const auto async =
      read("export PYTORCH_ALLOC_CONF=backend:cudaMallocAsync,expandable_segments:True");
  EXPECT_FALSE(async.job["training"].contains("expandable_segments"));
  EXPECT_NE(joined(async.notes).find("ignores expandable_segments"), std::string::npos)
      << joined(async.notes);
  // The same settings written with spaces are no disagreement.
  const auto spaced = read(
      "export PYTORCH_ALLOC_CONF='expandable_segments: True'\n"
      "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  EXPECT_EQ(spaced.job["training"].value("expandable_segments", false), true);
  EXPECT_EQ(joined(spaced.notes).find("differ"), std::string::npos) << joined(spaced.notes);
}

// The MoE dispatcher and the batch-level overlap come back: "auto" stays unset, a dispatcher
// other than auto's for the plan is written, and the overlap is read from the flags/fields.
TEST(Import, MoeDispatcherAndOverlapComeBack) {
  for (const char* extra : {"", R"(, "moe_a2a_overlap": true)", R"(, "moe_dispatcher": "hybridep")",
                            R"(, "moe_dispatcher": "alltoall", "moe_a2a_overlap": true)"}) {
    SCOPED_TRACE(extra);
    const Job job = qwen3_235b_job(extra);
    for (ExportFormat format : {ExportFormat::Megatron, ExportFormat::Nemo}) {
      EXPECT_TRUE(round_trip(job, format));
      tools::ImportOptions options{"dgx-h100", 32, job.model.vocab_size, "."};
      const auto imported = tools::import_launch(format, tools::export_launch_settings(job, format),
                                                 "launch", options);
      // Exactly the plan's keys: no dispatcher where it was "auto", the overlap where set.
      const Json& plan = imported.job["plan"];
      EXPECT_EQ(plan.contains("moe_dispatcher"), job.plan.moe_dispatcher != MoeDispatcher::Auto);
      if (plan.contains("moe_dispatcher")) {
        EXPECT_EQ(plan["moe_dispatcher"], to_string(job.plan.moe_dispatcher));
      }
      EXPECT_EQ(plan.value("moe_a2a_overlap", false), job.plan.moe_a2a_overlap);
    }
  }
  // torchtitan (whose overlap refusal export_test checks; parplan has no preset for qwen3
  // 235B-A22B to import into): DeepEP comes back from deepseek_v3's expert_parallel_comm_backend.
  const Job deepseek = job_from(R"({"model": "deepseek-v3", "cluster": {"node": "dgx-h100",
      "num_nodes": 32}, "training": {"global_batch_size": 512, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 8, "ep": 32, "zero_stage": 3, "recompute": "full"}})");
  EXPECT_TRUE(round_trip(deepseek, ExportFormat::Torchtitan));
  const auto toml =
      tools::import_launch(ExportFormat::Torchtitan, tools::export_torchtitan(deepseek), "t.toml",
                           {"dgx-h100", 32, std::nullopt, "."});
  EXPECT_EQ(toml.job["plan"]["moe_dispatcher"], "deepep");  // torchtitan's auto: all-to-all

  // Hand-written forms: flex without a backend is DeepEP; allgather (Megatron's default) is
  // modelled as the all-to-all, with a note; no ncclep.
  const std::string base = R"(--num-layers 2 --hidden-size 256 --num-attention-heads 4
      --vocab-size 1000 --num-experts 16 --moe-router-topk 2 --moe-ffn-hidden-size 128
      --expert-model-parallel-size 16 --global-batch-size 64 --seq-length 1024
      --micro-batch-size 1 --bf16 )";
  const tools::ImportOptions two_nodes{"dgx-h100", 2, std::nullopt, "."};
  const auto flex = tools::import_launch(ExportFormat::Megatron,
                                         base +
                                             "--moe-token-dispatcher-type flex "
                                             "--overlap-moe-expert-parallel-comm",
                                         "f.sh", two_nodes);
  EXPECT_FALSE(flex.job["plan"].contains("moe_dispatcher"));  // auto: DeepEP across 2 nodes
  EXPECT_EQ(flex.job["plan"]["moe_a2a_overlap"], true);
  bool delay_noted = false;
  for (const std::string& note : flex.notes) {
    delay_noted |= note.find("--delay-wgrad-compute") != std::string::npos;
  }
  EXPECT_TRUE(delay_noted);
  const auto allgather = tools::import_launch(ExportFormat::Megatron, base, "a.sh", two_nodes);
  EXPECT_EQ(allgather.job["plan"]["moe_dispatcher"], "alltoall");
  ASSERT_FALSE(allgather.notes.empty());
  EXPECT_NE(error_of(ExportFormat::Megatron,
                     base + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep",
                     two_nodes)
                .find("ncclep"),
            std::string::npos);
}

TEST(Import, HandWrittenLaunchesAreRead) {
  const std::string script = R"(#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPT_ARGS="--num-layers 32 --hidden-size 4096 --num-attention-heads 32"
torchrun --nproc_per_node 8 --nnodes 2 --node_rank $RANK pretrain_gpt.py \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size=2 \
    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \
    --num-attention-heads 32 --group-query-attention --num-query-groups 8 \
    --swiglu --normalization RMSNorm --position-embedding-type rope --rotary-base 500000 \
    --use-rope-scaling --rope-scaling-factor 8 --disable-bias-linear \
    --untie-embeddings-and-output-weights --vocab-size 128256 \
    --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 \
    --bf16 --use-distributed-optimizer --sequence-parallel --recompute-granularity full \
    --recompute-method block --recompute-num-layers 4 \
    --lr 3e-4 --some-new-flag 7   # a comment
)";
  tools::ImportOptions options;
  options.node = "dgx-h100";
  const auto r = tools::import_launch(ExportFormat::Megatron, script, "train.sh", options);
  EXPECT_EQ(r.job["model"], "llama3.1-8b");
  EXPECT_EQ(r.job["cluster"]["num_nodes"], 2);
  EXPECT_EQ(r.job["plan"]["dp"], 4);
  EXPECT_EQ(r.job["plan"]["zero_stage"], 1);
  ASSERT_EQ(r.unread.size(), 1u);
  EXPECT_EQ(r.unread[0], "train.sh:14: --some-new-flag");
  bool overlap_noted = false, partial_recompute_noted = false;
  for (const std::string& note : r.notes) {
    overlap_noted |= note.find("does not overlap the gradient reduction") != std::string::npos;
    partial_recompute_noted |= note.find("recomputes part of the layers") != std::string::npos;
  }
  EXPECT_TRUE(overlap_noted);
  EXPECT_TRUE(partial_recompute_noted);
  EXPECT_EQ(r.job["plan"]["recompute"], "full");

  const std::string yaml = R"(# hand-written
model:
  tensor_model_parallel_size: 4   # tp
  pipeline_model_parallel_size: 1
  num_layers: 32
  hidden_size: 4096
  ffn_hidden_size: 14336
  num_attention_heads: 32
  num_query_groups: 8
  gated_linear_unit: true
  normalization: "RMSNorm"
  position_embedding_type: rope
  rotary_base: 500000
  rope_scaling: true
  rope_scaling_factor: 8.0
  add_bias_linear: false
  share_embeddings_and_output_weights: false
  sequence_parallel: true
train:
  micro_batch_size: 2
  global_batch_size: 128
dataset:
  seq_length: 8192
mixed_precision: bf16_mixed
logger:
  log_interval: 10
)";
  const auto y =
      tools::import_launch(ExportFormat::Nemo, yaml, "o.yaml", {"dgx-h100", 1, std::nullopt, "."});
  EXPECT_EQ(y.job["model"], "llama3.1-8b");
  EXPECT_EQ(y.job["plan"]["tp"], 4);
  EXPECT_EQ(y.job["plan"]["dp"], 2);
  ASSERT_EQ(y.unread.size(), 1u);
  EXPECT_EQ(y.unread[0], "o.yaml:26: logger.log_interval");

  const std::string toml = R"([model]
name = "llama3"   # torchtitan's
flavor = '70B'
[training]
local_batch_size = 32
seq_len = 8192
[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 8
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_layers_per_stage = 4
pipeline_parallel_first_stage_less_layers = 0
pipeline_parallel_last_stage_less_layers = 0
[activation_checkpoint]
mode = "full"
)";
  const auto t = tools::import_launch(ExportFormat::Torchtitan, toml, "t.toml",
                                      {"dgx-h100", 8, std::nullopt, "."});
  EXPECT_EQ(t.job["model"], "llama3.1-70b");
  EXPECT_EQ(t.job["plan"]["vpp"], 5);
  EXPECT_EQ(t.job["plan"]["dp"], 2);
  EXPECT_EQ(t.job["plan"]["zero_stage"], 2);  // "default" resharding with pp > 1
  EXPECT_EQ(t.job["training"]["global_batch_size"], 64);
}

std::string error_of(ExportFormat format, const std::string& text, tools::ImportOptions o) {
  try {
    tools::import_launch(format, text, "f", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Import, UnreadableTextNamesTheLine) {
  const tools::ImportOptions o{"dgx-h100", 1, std::nullopt, "."};
  EXPECT_NE(error_of(ExportFormat::Nemo, "model:\n\tnum_layers: 2\n", o).find("f:2"),
            std::string::npos);
  EXPECT_NE(error_of(ExportFormat::Nemo, "model:\n  - 1\n", o).find("block sequence"),
            std::string::npos);
  EXPECT_NE(error_of(ExportFormat::Torchtitan, "[[x]]\n", o).find("f:1"), std::string::npos);
  EXPECT_NE(error_of(ExportFormat::Torchtitan, "[a]\nb = [1,\n", o).find("not closed"),
            std::string::npos);
  EXPECT_NE(error_of(ExportFormat::Megatron, "--num-layers 'x\n", o).find("quote"),
            std::string::npos);
  EXPECT_NE(error_of(ExportFormat::Megatron, "--num-layers x\n", o).find("f:1: --num-layers"),
            std::string::npos);
  const std::string no_nodes =
      error_of(ExportFormat::Megatron,
               "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 100 "
               "--global-batch-size 8 --seq-length 128",
               {"dgx-h100", std::nullopt, std::nullopt, "."});
  EXPECT_NE(no_nodes.find("--nodes"), std::string::npos) << no_nodes;
  EXPECT_NE(error_of(ExportFormat::Megatron,
                     "--num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                     "--global-batch-size 8 --seq-length 128",
                     o)
                .find("--vocab-size"),
            std::string::npos);
}

TEST(Import, CommandWritesTheJobAndListsWhatItDidNotRead) {
  TempDir dir;
  {
    const CommandResult exported =
        run_parplan("export --job " + std::string(PARPLAN_SOURCE_DIR) +
                    "/tools/examples/llama3.1-70b-dgx-h100.json --format megatron");
    ASSERT_EQ(exported.exit_code, 0) << exported.output;
    std::string text = exported.output.substr(exported.output.find("export CUDA"));
    FILE* f = std::fopen(dir.file("train.sh").c_str(), "w");
    std::fputs((text + "  --my-flag\n").c_str(), f);
    std::fclose(f);
  }
  const CommandResult r = run_parplan("import --format megatron " + dir.file("train.sh") +
                                      " --node dgx-h100 --out " + dir.file("job.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("not read: "), std::string::npos) << r.output;
  const CommandResult sim = run_parplan("simulate --job " + dir.file("job.json"));
  EXPECT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_EQ(run_parplan("import --format nemo " + dir.file("train.sh")).exit_code, 2);
}

// --torchtitan-version selects the release the config is for, and the output names it.
TEST(Import, ExportNamesTheTorchtitanVersion) {
  const std::string job =
      std::string(PARPLAN_SOURCE_DIR) + "/tools/examples/llama3.1-70b-dgx-h100.json";
  const CommandResult main = run_parplan(
      "export --job " + job + " --format torchtitan --torchtitan-version main --plan-nearest");
  EXPECT_EQ(main.exit_code, 0) << main.output;
  EXPECT_NE(main.output.find("torchtitan main (pytorch/torchtitan b5bcd76c)"), std::string::npos);
  EXPECT_NE(main.output.find("def parplan_config() -> Trainer.Config:"), std::string::npos);
  const CommandResult toml =
      run_parplan("export --job " + job + " --format torchtitan --plan-nearest");
  EXPECT_NE(toml.output.find("torchtitan v0.2.2 job config (TOML)"), std::string::npos);
  EXPECT_EQ(run_parplan("export --job " + job + " --format torchtitan --torchtitan-version 0.3")
                .exit_code,
            2);
}

}  // namespace
}  // namespace parplan::testing
