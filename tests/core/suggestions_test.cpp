// Suggestions by meaning (issue 20, point 1): other programs' names for the job's keys
// (core/key_aliases.h through nearest_key_hint and JsonReader) and node presets by GPU
// (core/node_suggestions.h), never across GPU types.
#include <gtest/gtest.h>

#include "core/check.h"
#include "core/job.h"
#include "core/json_input.h"
#include "core/key_aliases.h"
#include "core/node_suggestions.h"

namespace parplan {
namespace {

std::string job_error(const std::string& cluster, const std::string& training,
                      const std::string& plan) {
  const std::string text = R"({"model": "llama2-7b", "cluster": )" + cluster + R"(, "training": )" +
                           training + R"(, "plan": )" + plan + "}";
  try {
    parse_job(parse_json(text, "job.json"), "job.json", "");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::string kCluster = R"({"node": "dgx-h100", "num_nodes": 1})";
const std::string kTraining = R"({"global_batch_size": 8, "seq_length": 4096})";

TEST(KeyAliases, OtherProgramsNamesMapToOurKeys) {
  EXPECT_EQ(key_alias_targets("vp"), std::vector<std::string>{"vpp"});
  EXPECT_EQ(key_alias_targets("--tensor-model-parallel-size"), std::vector<std::string>{"tp"});
  EXPECT_EQ(key_alias_targets("Seq_Len"), std::vector<std::string>{"seq_length"});
  EXPECT_EQ(key_alias_targets("batch_size"),
            (std::vector<std::string>{"global_batch_size", "micro_batch_size"}));
  EXPECT_EQ(key_alias_targets("train_tokens"), std::vector<std::string>{"total_tokens"});
  EXPECT_TRUE(key_alias_targets("tpp").empty());
}

TEST(KeyAliases, UnknownJobKeysAreAnsweredByMeaning) {
  // cluster.nodes: num_nodes, not `node` (which the object already has).
  std::string msg = job_error(R"({"node": "dgx-h100", "nodes": 1})", kTraining, "{}");
  EXPECT_NE(msg.find("cluster.nodes: found an unknown key"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(did you mean \"num_nodes\"?)"), std::string::npos) << msg;
  msg = job_error(kCluster, kTraining, R"({"vp": 2})");
  EXPECT_NE(msg.find("plan.vp: found an unknown key"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(did you mean \"vpp\"?)"), std::string::npos) << msg;
  msg = job_error(kCluster, kTraining, R"({"micro_batch": 2})");
  EXPECT_NE(msg.find("(did you mean \"micro_batch_size\"?)"), std::string::npos) << msg;
  msg = job_error(kCluster, kTraining, R"({"tensor_model_parallel_size": 2})");
  EXPECT_NE(msg.find("(did you mean \"tp\"?)"), std::string::npos) << msg;
  // A required key given under another name is named as missing, with the rename.
  msg = job_error(kCluster, R"({"global_batch_size": 8, "seq_len": 4096})", "{}");
  EXPECT_NE(msg.find("training.seq_length: found nothing (the key is missing; \"seq_len\" is "
                     "given: rename it \"seq_length\")"),
            std::string::npos)
      << msg;
}

TEST(KeyAliases, SpellingTiesListEveryCandidate) {
  EXPECT_EQ(nearest_key_hint("tpp", {"tp", "pp", "dp"}), " (did you mean \"tp\" or \"pp\"?)");
  EXPECT_EQ(nearest_key_hint("tpp", {"tp", "pp", "dp"}, {"tp"}), " (did you mean \"pp\"?)");
  EXPECT_EQ(nearest_key_hint("Model", {"model", "plan"}), " (did you mean \"model\"?)");
  EXPECT_EQ(nearest_key_hint("zzzzzz", {"model", "plan"}), "");
  EXPECT_EQ(nearest_key_hint("xp", {"tp", "pp", "dp", "cp"}), "");  // four ties: no guess
}

TEST(NodeSuggestions, GpuNamesFindThePresetsCarryingThatGpu) {
  EXPECT_EQ(suggest_node_presets("dgx-h100-80gb").presets, std::vector<std::string>{"dgx-h100"});
  EXPECT_EQ(suggest_node_presets("DGX-H100").presets, std::vector<std::string>{"dgx-h100"});
  // Every H100 server: listed, not guessed.
  EXPECT_EQ(suggest_node_presets("H100").presets,
            (std::vector<std::string>{"dgx-h100", "grand-teton-h100-96gb", "pcie-8x-h100-nvl",
                                      "xe9680-h100"}));
  EXPECT_EQ(suggest_node_presets("h100").presets, suggest_node_presets("H100").presets);
  EXPECT_EQ(suggest_node_presets("dgx-a100").presets,
            (std::vector<std::string>{"dgx-a100-40gb", "dgx-a100-80gb"}));
  EXPECT_EQ(suggest_node_presets("a100-40gb").presets, std::vector<std::string>{"dgx-a100-40gb"});
  EXPECT_EQ(suggest_node_presets("b200").presets, std::vector<std::string>{"dgx-b200"});
  EXPECT_EQ(suggest_node_presets("gb200").presets, std::vector<std::string>{"gb200-nvl72"});
}

TEST(NodeSuggestions, NeverAcrossGpuTypes) {
  for (const char* text : {"dgx-h100-80gb", "h100-80gb", "hgx-h100", "dgx-h100-sxm"}) {
    SCOPED_TRACE(text);
    for (const auto& preset : suggest_node_presets(text).presets) {
      EXPECT_NE(preset.find("h100"), std::string::npos) << preset;
    }
  }
  // A GPU no preset carries gets no spelling guess (dgx-h200 would swap the GPU).
  const NodePresetSuggestion h20 = suggest_node_presets("dgx-h20");
  EXPECT_TRUE(h20.presets.empty());
  EXPECT_EQ(h20.unknown_gpu, "h20");
  EXPECT_NE(node_preset_hint("gh200").find("no preset carries a \"gh200\" GPU"), std::string::npos);
  // Without a GPU name, spelling still helps.
  EXPECT_EQ(suggest_node_presets("dgx-h1000").presets, std::vector<std::string>{"dgx-h100"});
  EXPECT_EQ(suggest_node_presets("whatever-box").presets, std::vector<std::string>{});
}

TEST(NodeSuggestions, TheJobErrorNamesTheCandidatesAndTheirGpus) {
  std::string msg = job_error(R"({"node": "dgx-h100-80gb", "num_nodes": 1})", kTraining, "{}");
  EXPECT_NE(msg.find("cluster.node: found \"dgx-h100-80gb\" (no such preset or file)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(did you mean \"dgx-h100\" (H100-SXM5-80GB)?)"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("dgx-a100-80gb\" ("), std::string::npos) << msg;
  msg = job_error(R"({"node": "dgx-a100", "num_nodes": 1})", kTraining, "{}");
  EXPECT_NE(msg.find("(did you mean \"dgx-a100-40gb\" (A100-SXM4-40GB) or \"dgx-a100-80gb\" "
                     "(A100-SXM4-80GB)?)"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace parplan
