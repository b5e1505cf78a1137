#include "core/job.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace parplan
