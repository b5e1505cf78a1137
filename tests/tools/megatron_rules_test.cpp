// What `parplan export --format megatron` prints must pass Megatron-LM's own argument checks
// (NVIDIA/Megatron-LM at d98e8a64dd: megatron/training/arguments.py validate_args,
// megatron/core/transformer/pipeline_parallel_layer_layout.py, model_parallel_config.py).
// The checks below restate those rules on the printed flags, and run on the planner's best
// plans for a range of jobs, so a plan the planner recommends launches unmodified.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "core/job.h"
#include "core/json_input.h"
#include "planner/search.h"
#include "tests/tools/launch_rules_jobs.h"
#include "tools/export/launch_settings.h"

namespace parplan {
namespace {

struct MegatronLaunch {
  std::map<std::string, std::string> args;  // flag -> value ("" for switches)
  std::string connections;                  // CUDA_DEVICE_MAX_CONNECTIONS: "1", "unset", ""
  bool has(const std::string& flag) const { return args.count(flag) > 0; }
  int64_t number(const std::string& flag, int64_t fallback) const {
    auto it = args.find(flag);
    return it == args.end() ? fallback : std::stoll(it->second);
  }
};

MegatronLaunch parse_launch(const std::string& text) {
  MegatronLaunch out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export CUDA_DEVICE_MAX_CONNECTIONS=", 0) == 0) {
      out.connections = line.substr(35, line.find(' ', 35) - 35);
    } else if (line.rfind("unset CUDA_DEVICE_MAX_CONNECTIONS", 0) == 0) {
      out.connections = "unset";
    }
    const auto start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, 2, "--") != 0) continue;
    const std::string t = line.substr(start);
    const auto space = t.find(' ');
    std::string value = space == std::string::npos ? "" : t.substr(space + 1);
    if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
    EXPECT_EQ(out.args.count(t.substr(0, space)), 0u) << "flag given twice: " << t;
    out.args[t.substr(0, space)] = value;
  }
  return out;
}

// pipeline_parallel_layer_layout.py parse_str_to_list: "(ab|)*n" and "x*n" unrolled, commas
// dropped, stages split by "|".
std::vector<std::string> layout_stages(std::string layout) {
  layout = std::regex_replace(layout, std::regex(","), "");
  for (const std::regex& pattern :
       {std::regex(R"(\(([^)]+)\)\*(\d+))"), std::regex(R"((.)\*(\d+))")}) {
    std::smatch m;
    while (std::regex_search(layout, m, pattern)) {
      std::string repeated;
      for (int i = 0; i < std::stoi(m[2]); ++i) repeated += m[1];
      layout = m.prefix().str() + repeated + m.suffix().str();
    }
  }
  std::vector<std::string> stages(1);
  for (char c : layout) {
    if (c == '|') {
      stages.emplace_back();
    } else {
      stages.back() += c;
    }
  }
  return stages;
}

// Megatron-LM's checks that involve parallelism, batch, layers and precision.
void expect_megatron_accepts(const Job& job, const std::string& text) {
  SCOPED_TRACE(text);
  const MegatronLaunch l = parse_launch(text);
  const int64_t world = job.cluster.num_gpus;
  const int64_t tp = l.number("--tensor-model-parallel-size", 1);
  const int64_t pp = l.number("--pipeline-model-parallel-size", 1);
  const int64_t cp = l.number("--context-parallel-size", 1);
  const int64_t ep = l.number("--expert-model-parallel-size", 1);
  const int64_t layers = l.number("--num-layers", 0);
  // initialize_model_parallel: the world divides into tp*pp*cp model-parallel groups.
  ASSERT_EQ(world % (tp * pp * cp), 0);
  const int64_t dp = world / (tp * pp * cp);
  // The global batch is whole micro-batches on every data-parallel rank.
  EXPECT_EQ(l.number("--global-batch-size", 0) % (l.number("--micro-batch-size", 1) * dp), 0);
  EXPECT_EQ(l.number("--num-attention-heads", 0) % tp, 0);
  EXPECT_EQ(l.number("--num-query-groups", l.number("--num-attention-heads", 0)) % tp, 0);
  if (cp > 1) {
    EXPECT_EQ(l.number("--seq-length", 0) % (2 * cp), 0);
  }
  if (l.has("--num-experts")) {
    // At most one way of setting virtual stages.
    EXPECT_EQ(l.number("--num-experts", 0) % ep, 0);
  }
  const int ways = l.has("--num-layers-per-virtual-pipeline-stage") +
                   l.has("--num-virtual-stages-per-pipeline-rank") +
                   l.has("--pipeline-model-parallel-layout");
  EXPECT_LE(ways, 1);
  if (l.has("--pipeline-model-parallel-layout")) {
    const auto stages = layout_stages(l.args.at("--pipeline-model-parallel-layout"));
    EXPECT_EQ(static_cast<int64_t>(stages.size()) % pp, 0);
    std::string flat;
    for (const auto& s : stages) flat += s;
    EXPECT_EQ(flat.front(), 'E');
    EXPECT_EQ(flat.back(), 'L');
    EXPECT_EQ(std::count(flat.begin(), flat.end(), 't'), layers);
    EXPECT_EQ(std::count(flat.begin(), flat.end(), 'E'), 1);
    EXPECT_EQ(std::count(flat.begin(), flat.end(), 'L'), 1);
    if (stages.size() / pp > 1) {  // interleaving needs pp > 1
      EXPECT_GT(pp, 1);
    }
  } else if (l.has("--decoder-first-pipeline-num-layers")) {
    // transformer_config.py: first/last-stage counts "must be larger than 0".
    EXPECT_GT(l.number("--decoder-first-pipeline-num-layers", 0), 0);
    EXPECT_GT(l.number("--decoder-last-pipeline-num-layers", 0), 0);
    const int64_t rest = layers - l.number("--decoder-first-pipeline-num-layers", 0) -
                         l.number("--decoder-last-pipeline-num-layers", 0);
    ASSERT_GT(pp, 2);
    EXPECT_EQ(rest % (pp - 2), 0);
  } else {
    EXPECT_EQ(layers % pp, 0) << "Number of layers should be divisible by pp";
    if (l.has("--num-layers-per-virtual-pipeline-stage")) {
      EXPECT_EQ((layers / pp) % l.number("--num-layers-per-virtual-pipeline-stage", 1), 0);
    }
  }
  // CUDA_DEVICE_MAX_CONNECTIONS: 1 with tp or cp > 1 before Blackwell, never 1 with FSDP or
  // the MoE overlap (arguments.py only warns about tp/cp with the overlap; the MoE README
  // requires more than one connection for it).
  const bool fsdp = l.has("--use-megatron-fsdp");
  const bool a2a_overlap = l.has("--overlap-moe-expert-parallel-comm");
  if (fsdp) {
    EXPECT_EQ(l.args.at("--ckpt-format"), "fsdp_dtensor");
  }
  if (fsdp || a2a_overlap) {
    EXPECT_NE(l.connections, "1");
  } else if ((tp > 1 || cp > 1) && job.cluster.node.gpu.architecture != "blackwell") {
    EXPECT_EQ(l.connections, "1");
  }
  // transformer_config.py __post_init__ on the overlap: expert parallelism, the alltoall or
  // flex dispatcher, virtual stages when pipelining, no full recomputation or recompute
  // method, a bf16 or fp16 model; delay_wgrad_compute only with the overlap.
  if (a2a_overlap) {
    EXPECT_GT(ep, 1);
    const std::string dispatcher = l.args.count("--moe-token-dispatcher-type")
                                       ? l.args.at("--moe-token-dispatcher-type")
                                       : "allgather";
    EXPECT_TRUE(dispatcher == "alltoall" || dispatcher == "flex") << dispatcher;
    if (pp > 1) {
      EXPECT_TRUE(l.has("--num-layers-per-virtual-pipeline-stage") ||
                  l.has("--num-virtual-stages-per-pipeline-rank") ||
                  l.has("--pipeline-model-parallel-layout"));
    }
    EXPECT_FALSE(l.has("--recompute-method"));
    EXPECT_TRUE(l.has("--bf16") || l.has("--fp16"));
  }
  if (l.has("--delay-wgrad-compute")) {
    EXPECT_TRUE(a2a_overlap);
  }
  if (l.has("--moe-flex-dispatcher-backend")) {
    EXPECT_EQ(l.args.at("--moe-token-dispatcher-type"), "flex");
  }
  if (l.has("--tp-comm-overlap")) {
    // fp8: MXFP8 is a Blackwell recipe and uses E4M3 for every tensor.
    EXPECT_TRUE(l.has("--sequence-parallel"));
  }
  // arguments.py: fp8 parameter gathers need the distributed optimizer or an FSDP.
  if (l.has("--fp8-param-gather")) {
    EXPECT_TRUE(l.has("--use-distributed-optimizer") || l.has("--use-megatron-fsdp"));
  }
  // distributed_data_parallel_config.py: reuse_grad_buf_for_mxfp8_param_ag "should be set to
  // True only when fp8_recipe is mxfp8 and fp8_param_gather is True"; arguments.py turns it
  // off under Megatron-FSDP.
  if (l.has("--reuse-grad-buf-for-mxfp8-param-ag")) {
    EXPECT_EQ(l.args.at("--fp8-recipe"), "mxfp8");
    EXPECT_TRUE(l.has("--fp8-param-gather"));
    EXPECT_FALSE(l.has("--use-megatron-fsdp"));
  }
  if (l.has("--fp8-recipe") && l.args.at("--fp8-recipe") == "mxfp8") {
    EXPECT_EQ(job.cluster.node.gpu.architecture, "blackwell");
    EXPECT_EQ(l.args.at("--fp8-format"), "e4m3");
  }
  // Every Megatron-Core MoE path the time model assumes: grouped expert GEMMs.
  if (l.has("--num-experts")) {
    EXPECT_TRUE(l.has("--moe-grouped-gemm"));
  }
}

Job job_from(const std::string& text) { return testing::launch_job_from(text); }
using testing::job_text;

// The planner's best plans, as `parplan plan` ranks them, export to launches Megatron accepts
// (after --plan-nearest where the plan needs a schedule Megatron lacks).
TEST(MegatronRules, ThePlannersBestPlansLaunch) {
  const std::vector<std::string> jobs = {
      job_text("llama3.1-8b", "dgx-h100", 1, 128, 8192),
      job_text("llama3.1-70b", "dgx-h100", 8, 512, 8192),
      job_text("llama3.1-405b", "dgx-h100", 64, 1024, 8192),
      job_text("gpt3-175b", "dgx-a100-80gb", 32, 1536, 2048),
      job_text("mixtral-8x7b", "dgx-h100", 8, 512, 4096),
      job_text("deepseek-v3", "dgx-h100", 128, 4096, 4096, "fp8"),
      job_text("qwen2.5-72b", "dgx-b200", 8, 256, 4096, "fp8"),
      job_text("qwen3-30b-a3b", "dgx-h100", 4, 256, 4096),
      job_text("nemotron4-340b", "dgx-h100", 48, 768, 4096),
      job_text("llama2-70b", "dgx-a100-80gb", 16, 1024, 4096),
  };
  int exported = 0;
  for (const std::string& text : jobs) {
    Job job = job_from(text);
    planner::SearchOptions options;
    options.top_k = 5;
    // Any thread count gives the same plans (Search.IdenticalResultsForAnyThreadCount); two
    // halve the ten searches' time.
    options.threads = 2;
    const planner::SearchResult result = planner::search_plans(job, options);
    ASSERT_FALSE(result.top.empty()) << text;
    for (const planner::RankedPlan& ranked : result.top) {
      job.plan = ranked.plan;
      job.plan_given = true;
      for (int round = 0; round < 4; ++round) {
        const auto refusal = tools::megatron_refusal(job);
        if (!refusal) break;
        ASSERT_TRUE(refusal->nearest.has_value()) << refusal->key;
        job.plan = *refusal->nearest;
      }
      ASSERT_FALSE(tools::megatron_refusal(job).has_value());
      expect_megatron_accepts(job, tools::export_megatron(job));
      ++exported;
    }
  }
  EXPECT_EQ(exported, 50);
}

TEST(MegatronRules, UnevenSplitsUseTheLayout) {
  Job job = job_from(R"({"model": "deepseek-v3", "cluster": {"node": "dgx-h100", "num_nodes": 64},
      "training": {"global_batch_size": 1024, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 16, "ep": 32, "recompute": "full"}})");
  const std::string text = tools::export_megatron(job);
  const MegatronLaunch l = parse_launch(text);
  // 61 layers on 16 stages: the 13 extra layers go to the stages farthest from both ends.
  std::string expected = "Et*3|";
  for (int i = 0; i < 13; ++i) expected += "t*4|";
  EXPECT_EQ(l.args.at("--pipeline-model-parallel-layout"), expected + "t*3|t*3L");
  expect_megatron_accepts(job, text);
  EXPECT_EQ(tools::launch::megatron_pipeline_layout({1, 0, 2}), "Et||t*2L");
}

// Chunks holding only the embedding or the output layer (Llama 3.1 405B's 126 layers on 128
// chunks) launch through the layout: first/last-stage counts must be positive.
TEST(MegatronRules, EmbeddingAndOutputOnlyChunksUseTheLayout) {
  for (const Job& job : testing::jobs_with_embedding_and_output_only_chunks()) {
    ASSERT_FALSE(tools::megatron_refusal(job).has_value());
    const std::string text = tools::export_megatron(job);
    const MegatronLaunch l = parse_launch(text);
    const std::string layout = l.args.at("--pipeline-model-parallel-layout");
    EXPECT_EQ(layout.substr(0, 2), "E|");
    EXPECT_EQ(layout.substr(layout.size() - 2), "|L");
    EXPECT_FALSE(l.has("--decoder-first-pipeline-num-layers"));
    expect_megatron_accepts(job, text);
  }
}

TEST(MegatronRules, PlansMegatronCannotRunAreRefusedWithTheNearestPlan) {
  const std::string base = R"("model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": 2}, "training": {"global_batch_size": 64, "seq_length": 4096})";
  auto refusal = [&](const std::string& plan, const std::string& extra = "") {
    return tools::megatron_refusal(job_from("{" + base + extra + R"(, "plan": )" + plan + "}"));
  };
  const auto zb = refusal(R"({"pp": 4, "schedule": "zero-bubble"})");
  ASSERT_TRUE(zb.has_value());
  EXPECT_EQ(zb->key, "plan.schedule");
  EXPECT_EQ(zb->found, "zero-bubble");
  ASSERT_TRUE(zb->nearest.has_value());
  EXPECT_EQ(zb->nearest->schedule, ScheduleKind::OneFOneB);
  const auto order = refusal(R"({"tp": 2, "pp": 2, "order": "tp-pp-dp"})");
  ASSERT_TRUE(order.has_value());
  EXPECT_EQ(order->key, "plan.order");
  EXPECT_EQ(order->nearest->order, "tp-cp-ep-dp-pp");
  const auto hsdp = refusal(R"({"tp": 2, "zero_stage": 3, "zero_shard_size": 4})");
  ASSERT_TRUE(hsdp.has_value());
  EXPECT_EQ(hsdp->key, "plan.zero_shard_size");
  EXPECT_FALSE(refusal(R"({"tp": 2, "pp": 2})").has_value());
  EXPECT_FALSE(refusal(R"({"tp": 2, "zero_stage": 1, "zero_shard_size": 4})").has_value());
  const auto lora = tools::megatron_refusal(job_from(R"({"model": "llama3.1-8b", "cluster":
      {"node": "dgx-h100", "num_nodes": 1}, "training": {"global_batch_size": 32,
      "seq_length": 4096, "method": "lora", "lora_rank": 16}, "plan": {"tp": 2}})"));
  ASSERT_TRUE(lora.has_value());
  EXPECT_EQ(lora->key, "training.method");
  EXPECT_FALSE(lora->nearest.has_value());
  const auto bloom = tools::megatron_refusal(job_from(R"({"model": "bloom-176b", "cluster":
      {"node": "dgx-a100-80gb", "num_nodes": 48}, "training": {"global_batch_size": 2048,
      "seq_length": 2048}, "plan": {"tp": 4, "pp": 12}})"));
  ASSERT_TRUE(bloom.has_value());
  EXPECT_EQ(bloom->key, "model.position_embedding");
}

// Model details Megatron's defaults get wrong unless told: biases, RoPE base and scaling,
// q/k/v biases and query-key norms, and a vocabulary Megatron must not pad further.
TEST(MegatronRules, ModelDetailsFollowThePreset) {
  auto launch = [&](const std::string& model, int64_t tp) {
    return parse_launch(tools::export_megatron(
        job_from(R"({"model": ")" + model + R"(", "cluster": {"node": "dgx-h100", "num_nodes": 8},
            "training": {"global_batch_size": 256, "seq_length": 4096},
            "plan": {"tp": )" +
                 std::to_string(tp) + R"(, "pp": 4}})")));
  };
  const auto llama = launch("llama3.1-70b", 8);
  EXPECT_TRUE(llama.has("--disable-bias-linear"));
  EXPECT_EQ(llama.args.at("--rotary-base"), "500000");
  EXPECT_TRUE(llama.has("--use-rope-scaling"));
  EXPECT_EQ(llama.args.at("--rope-scaling-factor"), "8");
  // 128256 = 2^8 * 501: with tp 8, 32 * 8 divides it, so Megatron keeps 128256.
  EXPECT_EQ(llama.args.at("--make-vocab-size-divisible-by"), "32");
  const auto qwen = launch("qwen2.5-72b", 8);
  EXPECT_TRUE(qwen.has("--add-qkv-bias"));
  EXPECT_EQ(qwen.args.at("--rotary-base"), "1000000");
  EXPECT_FALSE(qwen.has("--use-rope-scaling"));
  EXPECT_TRUE(launch("qwen3-30b-a3b", 4).has("--qk-layernorm"));
  const auto gpt3 = launch("gpt3-175b", 8);
  EXPECT_FALSE(gpt3.has("--disable-bias-linear"));
  EXPECT_FALSE(gpt3.has("--rotary-base"));
}

// torchtitan v0.2.2 (torchtitan/distributed/pipeline_parallel.py): with layers_per_stage set,
// the stages are ceil((layers + first_less + last_less) / layers_per_stage), a multiple of pp,
// one per rank for single-stage schedules and at least two for the others.
TEST(TorchtitanRules, PipelineSplitsAndRefusals) {
  for (const char* plan : {R"({"tp": 8, "pp": 4, "vpp": 5, "zero_stage": 3})",
                           R"({"tp": 8, "pp": 4, "zero_stage": 3})",
                           R"({"tp": 8, "pp": 2, "vpp": 2, "zero_stage": 3})"}) {
    const Job job = job_from(R"({"model": "llama3.1-70b", "cluster": {"node": "dgx-h100",
        "num_nodes": 16}, "training": {"global_batch_size": 512, "seq_length": 8192},
        "plan": )" + std::string(plan) +
                             "}");
    ASSERT_FALSE(tools::torchtitan_refusal(job).has_value()) << plan;
    std::map<std::string, int64_t> keys;
    std::istringstream in(tools::export_torchtitan(job));
    std::string line;
    while (std::getline(in, line)) {
      const auto eq = line.find(" = ");
      if (eq != std::string::npos && std::isdigit(static_cast<unsigned char>(line[eq + 3]))) {
        keys[line.substr(0, eq)] = std::stoll(line.substr(eq + 3));
      }
    }
    const int64_t pp = keys.at("pipeline_parallel_degree");
    const int64_t stages = (80 + keys.at("pipeline_parallel_first_stage_less_layers") +
                            keys.at("pipeline_parallel_last_stage_less_layers") +
                            keys.at("pipeline_parallel_layers_per_stage") - 1) /
                           keys.at("pipeline_parallel_layers_per_stage");
    EXPECT_EQ(stages % pp, 0) << plan;
    EXPECT_EQ(stages / pp, job.plan.vpp) << plan;
  }
  const std::string base = R"("cluster": {"node": "dgx-h100", "num_nodes": 2},
      "training": {"global_batch_size": 64, "seq_length": 4096})";
  auto refusal = [&](const std::string& model, const std::string& plan) {
    return tools::torchtitan_refusal(
        job_from(R"({"model": ")" + model + R"(", )" + base + R"(, "plan": )" + plan + "}"));
  };
  EXPECT_EQ(refusal("llama2-7b", R"({"tp": 2})")->key, "model");  // no Llama 2 flavor
  EXPECT_EQ(refusal("mixtral-8x7b", R"({"tp": 2, "ep": 8})")->key, "model");
  const auto zero1 = refusal("llama3.1-8b", R"({"tp": 2, "zero_stage": 1})");
  ASSERT_TRUE(zero1.has_value());
  EXPECT_EQ(zero1->nearest->zero_stage, 2);
  const auto dualpipe =
      refusal("llama3.1-8b", R"({"pp": 4, "schedule": "dualpipe", "zero_stage": 3})");
  ASSERT_TRUE(dualpipe.has_value());
  EXPECT_EQ(dualpipe->key, "plan.schedule");
  EXPECT_FALSE(refusal("llama3.1-8b", R"({"tp": 2, "zero_stage": 3})").has_value());
  // DDP only as the sole parallelism (v0.2.2 llama3/infra/parallelize.py).
  const auto ddp = refusal("llama3.1-8b", R"({"tp": 2, "zero_stage": 0})");
  ASSERT_TRUE(ddp.has_value());
  EXPECT_EQ(ddp->key, "plan.zero_stage");
  EXPECT_EQ(ddp->nearest->zero_stage, 2);
  EXPECT_FALSE(refusal("llama3.1-8b", R"({"tp": 1, "zero_stage": 0})").has_value());
}

}  // namespace
}  // namespace parplan
