#include "core/job.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/check.h"

namespace parplan {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_job(parse_json(text, "job.json"), "job.json", "");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Job, ContractExampleLoadsWithDefaults) {
  const Job job = parse_job(parse_json(R"({
      "framework": "megatron-core", "model": "gpt3-175b",
      "cluster": {"node": "dgx-h100", "num_nodes": 48},
      "training": {"global_batch_size": 1536, "seq_length": 2048, "precision": "bf16"},
      "plan": {"tp": 8, "pp": 12, "dp": 4, "micro_batch_size": 1}})",
                                       "job.json"),
                            "job.json", "");
  EXPECT_EQ(job.cluster.num_gpus, 384);
  EXPECT_EQ(job.plan.cp, 1);
  EXPECT_EQ(job.plan.vpp, 1);
  EXPECT_EQ(job.plan.recompute, Recompute::None);
  EXPECT_EQ(job.plan.schedule, ScheduleKind::OneFOneB);
  EXPECT_EQ(job.training.method, TrainingMethod::Pretrain);
  EXPECT_EQ(job.framework, Framework::MegatronCore);
}

TEST(Job, ErrorsNameFileKeyFoundAndAllowed) {
  const std::string base = R"("model": "gpt3-175b", "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 8, "seq_length": 2048})";
  std::string msg = error_of("{" + base + R"(, "plan": {"tp": 5}})");
  EXPECT_NE(msg.find("job.json: plan.tp: found tp*pp*cp = 5"), std::string::npos) << msg;
  msg = error_of("{" + base + R"(, "plan": {"tpp": 2}})");
  EXPECT_NE(msg.find("plan.tpp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean"), std::string::npos) << msg;
  msg = error_of(R"({"model": "gpt3-175bb", "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 8, "seq_length": 2048}})");
  EXPECT_NE(msg.find("job.json: model: found \"gpt3-175bb\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean \"gpt3-175b\""), std::string::npos) << msg;
  msg = error_of("{" + base + R"(, "framework": "jax"})");
  EXPECT_NE(msg.find("framework: found \"jax\""), std::string::npos) << msg;
  msg = error_of(R"({"model": "gpt3-175b", "cluster": {"node": "dgx-h100", "num_nodes": 1}})");
  EXPECT_NE(msg.find("training: found nothing"), std::string::npos) << msg;
}

TEST(Job, RelativeModelPathResolvesAgainstJobFolder) {
  const std::string dir = testing::TempDir();
  std::ofstream(dir + "/m.json") << R"({"name": "tiny", "num_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "vocab_size": 128})";
  std::ofstream(dir + "/job.json")
      << R"({"model": "m.json", "cluster": {"node": "dgx-h100", "num_gpus": 2},
      "training": {"global_batch_size": 4, "seq_length": 32}})";
  const Job job = load_job(dir + "/job.json");
  EXPECT_EQ(job.model.name, "tiny");
  EXPECT_EQ(job.cluster.num_gpus, 2);
  EXPECT_EQ(job.cluster.num_nodes, 1);
  EXPECT_EQ(job.plan.dp, 2);
}

// Issue 20, point 5: what used to pass silently.
TEST(Job, SequenceBeyondMaxPositionsIsAWarningNamingTheKey) {
  const std::string dir = testing::TempDir();
  std::ofstream(dir + "/long.json") << R"({"model": {"name": "m", "num_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128,
      "max_position_embeddings": 2048},
      "cluster": {"node": "dgx-h100", "num_gpus": 1},
      "training": {"global_batch_size": 8, "seq_length": 4096}})";
  const Job job = load_job(dir + "/long.json");
  ASSERT_EQ(job.warnings.size(), 1u);
  EXPECT_EQ(job.warnings[0], dir +
                                 "/long.json: training.seq_length: 4096 is longer than the "
                                 "model's max_position_embeddings (2048, " +
                                 dir +
                                 "/long.json model.max_position_embeddings); the "
                                 "prediction assumes the model takes it (RoPE scaling or a "
                                 "longer-context variant)");
  std::ofstream(dir + "/short.json") << R"({"model": {"name": "m", "num_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 128,
      "max_position_embeddings": 4096},
      "cluster": {"node": "dgx-h100", "num_gpus": 1},
      "training": {"global_batch_size": 8, "seq_length": 4096}})";
  EXPECT_TRUE(load_job(dir + "/short.json").warnings.empty());
}

// Expandable segments configure PyTorch's caching allocator: on MaxText (XLA) the key changes
// nothing, and the job says so instead of ignoring it silently.
TEST(Job, ExpandableSegmentsWithoutPyTorchAllocatorIsAWarning) {
  const auto job_with = [](const std::string& framework) {
    return parse_job(parse_json(R"({"framework": ")" + framework + R"(", "model": "llama3.1-8b",
        "cluster": {"node": "dgx-h100", "num_gpus": 8},
        "training": {"global_batch_size": 8, "seq_length": 4096, "expandable_segments": true}})",
                                "job.json"),
                     "job.json", "");
  };
  const Job maxtext = job_with("maxtext");
  ASSERT_EQ(maxtext.warnings.size(), 1u);
  EXPECT_EQ(maxtext.warnings[0],
            "job.json: training.expandable_segments: true has no effect with maxtext, which does "
            "not allocate through PyTorch's caching allocator");
  EXPECT_TRUE(job_with("megatron-core").warnings.empty());
}

TEST(Job, ModelFolderMeansItsConfigJson) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "hf_folder_job";
  fs::create_directories(dir / "Llama-3.1-8B");
  fs::create_directories(dir / "empty-folder");
  fs::copy_file(std::string(PARPLAN_TEST_DATA) + "/hf/Llama-3.1-8B/config.json",
                dir / "Llama-3.1-8B" / "config.json", fs::copy_options::overwrite_existing);
  const std::string rest = R"(, "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 8, "seq_length": 4096}})";
  std::ofstream((dir / "job.json").string()) << R"({"model": "Llama-3.1-8B/")" << rest;
  EXPECT_EQ(load_job((dir / "job.json").string()).model.num_layers, 32);
  std::ofstream((dir / "bad.json").string()) << R"({"model": "empty-folder")" << rest;
  try {
    load_job((dir / "bad.json").string());
    FAIL() << "a folder without config.json";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key_path(), "model");
    EXPECT_NE(std::string(e.what()).find("a folder without a config.json"), std::string::npos)
        << e.what();
  }
}

TEST(Job, SingleNodeServerNeedsNoInterNodeNetwork) {
  const std::string node = R"({"name": "workstation", "gpus_per_node": 2,
      "gpu": {"name": "X", "memory_gib": 24, "hbm_bandwidth_gbps": 1000,
              "dense_tflops": {"bf16": 100}},
      "intra_node": {"fabric": "pcie", "link_bandwidth_gbps": 32}})";
  const std::string text = R"({"model": "llama2-7b", "cluster": {"node": )" + node +
                           R"(, "num_nodes": NODES}, "training": {"global_batch_size": 8,
      "seq_length": 4096}})";
  std::string one = text;
  one.replace(one.find("NODES"), 5, "1");
  const Job job = parse_job(parse_json(one, "job.json"), "job.json", "");
  EXPECT_EQ(job.cluster.node.inter.nics_per_node, 0);
  std::string two = text;
  two.replace(two.find("NODES"), 5, "2");
  const std::string msg = error_of(two);
  EXPECT_NE(msg.find("job.json: cluster.num_nodes: found 2; allowed: one node's worth"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("no inter_node"), std::string::npos) << msg;
}

}  // namespace
}  // namespace parplan
