// `parplan simulate`, `compare`, `plan --report` and `export` end to end: exit codes,
// the files written, no temporary files left behind, refusal to write over an input, and
// usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/json_input.h"
#include "tests/tools/test_support.h"

namespace parplan::testing {
namespace {

const std::vector<std::string> kReportFiles = {"report.csv", "report.html", "report.json",
                                               "report.md"};

std::string q(const std::string& path) { return "'" + path + "'"; }

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(SimulateCli, APlanThatDoesNotFitShowsItsMemoryParts) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << R"({"model": "llama3.1-70b", "cluster": {"node": "dgx-h100",
      "num_gpus": 8}, "training": {"global_batch_size": 8, "seq_length": 8192},
      "plan": {"tp": 8, "micro_batch_size": 8}})";
  const CommandResult r = run_parplan("simulate --job " + q(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("DOES NOT FIT"), std::string::npos) << r.output;
  // One micro-batch (global batch 8 = dp 1 x mbs 8): singular.
  EXPECT_NE(r.output.find("(1 micro-batch chunk in flight)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("parplan plan --job"), std::string::npos) << r.output;
}

// A MoE plan names the dispatcher its prediction assumed: "auto" resolved (DeepEP for an expert
// group across nodes), in text and JSON, and the all-to-all overlap when set.
TEST(SimulateCli, AMoePlanNamesItsDispatcher) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100",
      "num_nodes": 2}, "training": {"global_batch_size": 64, "seq_length": 4096},
      "plan": {"ep": 16, "moe_a2a_overlap": true}})";
  const CommandResult text = run_parplan("simulate --job " + q(job));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("dispatcher=deepep (auto) a2a_overlap=on"), std::string::npos)
      << text.output;
  const CommandResult json = run_parplan("simulate --json --job " + q(job));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const Json out = parse_json(json.output, "stdout");
  EXPECT_EQ(out.at("moe_dispatcher"), "deepep");
  EXPECT_EQ(out.at("plan").at("moe_a2a_overlap"), true);
  EXPECT_FALSE(out.at("plan").contains("moe_dispatcher"));  // "auto" is not written
}

// Issue 20: a sequence beyond the model's positions is a warning naming both keys (exit 0),
// and one micro-batch is "1 micro-batch".
TEST(SimulateCli, WarnsAboutASequenceBeyondTheModelsPositions) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << R"({"model": {"name": "m", "num_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "vocab_size": 1024, "max_position_embeddings": 1024},
      "cluster": {"node": "dgx-h100", "num_gpus": 1},
      "training": {"global_batch_size": 1, "seq_length": 2048}})";
  const CommandResult r = run_parplan("simulate --job " + q(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: " + job +
                          ": training.seq_length: 2048 is longer than the model's "
                          "max_position_embeddings (1024, " +
                          job + " model.max_position_embeddings)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(1 micro-batch)\n"), std::string::npos) << r.output;
}

// A CPU (a measured profile's node) reaches hundredths of a TFLOP/s: printed, not "0.0".
TEST(SimulateCli, ACpuShowsItsSmallTflops) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << R"({"model": {"name": "m", "num_layers": 2, "hidden_size": 256,
      "num_attention_heads": 4, "vocab_size": 1024},
      "cluster": {"node": {"name": "cpu-box", "gpus_per_node": 2,
        "gpu": {"name": "cpu", "vendor": "cpu", "memory_gib": 16, "hbm_bandwidth_gbps": 20,
                "dense_tflops": {"fp32": 0.1}},
        "intra_node": {"fabric": "pcie", "link_bandwidth_gbps": 5}}, "num_gpus": 2},
      "training": {"global_batch_size": 4, "seq_length": 256, "precision": "fp32"}})";
  const CommandResult r = run_parplan("simulate --job " + q(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto at = r.output.find("model TFLOP/s  ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string value = r.output.substr(at + 15, r.output.find(' ', at + 15) - at - 15);
  EXPECT_LT(std::stod(value), 1.0) << r.output;  // the case this test is about
  EXPECT_GT(std::stod(value), 0.0) << r.output;
  EXPECT_GE(value.size(), 4u) << value;  // three significant digits, not "0.0"
  EXPECT_NE(r.output.find(" per rank, MFU "), std::string::npos) << r.output;
}

// A table without memory references says so instead of "n=0 MAPE 0.0%".
TEST(ValidateCli, ATableWithoutMemoryReferencesSaysSo) {
  const CommandResult r = run_parplan("validate --published " +
                                      q(report_data("../benchmark_tables/megascale_2402.json")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("peak memory, runs with a reference none: no memory references\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("n=0 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("step time, all runs              n=8 "), std::string::npos) << r.output;
}

TEST(Cli, AMisspeltCommandSuggestsTheNearest) {
  CommandResult r = run_parplan("simulte --job x.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("error: simulte: found an unknown command; allowed: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(did you mean \"simulate\"?)"), std::string::npos) << r.output;
  r = run_parplan("comp");  // a prefix
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("(did you mean \"compare\"?)"), std::string::npos) << r.output;
}

TEST(CompareCli, WritesFourFilesAtomicallyAndSummarizes) {
  TempDir dir;
  const std::string out = dir.file("report");  // created by compare
  const CommandResult r = run_parplan(
      "compare --job " + q(report_data("job.json")) + " --plan " + q(report_data("plan_vpp.json")) +
      " --plan " + q(report_data("plan_no_fit.json")) + " --top 2 --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(list_dir(out), kReportFiles);  // and no leftover ".report.*.tmp.*" files
  EXPECT_NE(r.output.find("winner: #1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("report.html"), std::string::npos);
  const Json json = Json::parse(read_file(out + "/report.json"));
  EXPECT_GE(json.at("plans").size(), 3u);  // job plan, two files, search results (merged)
  // Running again over an existing folder replaces the files.
  EXPECT_EQ(run_parplan("compare --job " + q(report_data("job.json")) + " --top 0 --out " + q(out))
                .exit_code,
            0);
  EXPECT_EQ(list_dir(out), kReportFiles);
  EXPECT_EQ(Json::parse(read_file(out + "/report.json")).at("plans").size(), 1u);
}

TEST(CompareCli, JsonPrintsTheReportJson) {
  TempDir dir;
  const CommandResult r = run_parplan("compare --job " + q(report_data("job.json")) +
                                      " --top 0 --method sft,lora --json --out " + q(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json printed = Json::parse(r.output);
  EXPECT_EQ(printed, Json::parse(read_file(dir.file("report.json"))));
  ASSERT_EQ(printed.at("plans").size(), 2u);
  EXPECT_EQ(printed.at("plans")[0].at("method").get<std::string>() == "sft" ||
                printed.at("plans")[0].at("method").get<std::string>() == "lora",
            true);
}

TEST(CompareCli, DefaultComparesTheJobPlanWithTheSearch) {
  TempDir dir;
  const CommandResult r =
      run_parplan("compare --job " + q(report_data("job.json")) + " --json --out " + q(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json json = Json::parse(r.output);
  bool job_plan = false, search = false;
  for (const auto& plan : json.at("plans")) {
    job_plan |= plan.at("label").get<std::string>().find("job plan") != std::string::npos;
    search |= plan.at("label").get<std::string>().find("search #") != std::string::npos;
  }
  EXPECT_TRUE(job_plan);
  EXPECT_TRUE(search);
}

TEST(CompareCli, RefusesToWriteOverTheJobFile) {
  TempDir dir;
  // The job file is named like an output and sits in the output folder.
  std::filesystem::copy_file(report_data("job.json"), dir.file("report.json"));
  const std::string before = read_file(dir.file("report.json"));
  const CommandResult r = run_parplan("compare --job " + q(dir.file("report.json")) +
                                      " --top 0 --out " + q(dir.path()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("the same file as the input"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(dir.file("report.json")), before);
}

TEST(CompareCli, ErrorsAndUsage) {
  TempDir dir;
  // Missing parent folder: exit 1 naming the folder.
  CommandResult r = run_parplan("compare --job " + q(report_data("job.json")) + " --out " +
                                q(dir.file("no/such/dir")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  // A bad plan file: exit 1 naming the file and the key.
  r = run_parplan("compare --job " + q(report_data("job.json")) + " --plan " +
                  q(report_data("plan_bad_key.json")) + " --out " + q(dir.path()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("plan_bad_key.json"), std::string::npos) << r.output;
  EXPECT_TRUE(list_dir(dir.path()).empty());  // nothing written on error
  // Usage: --out missing, unknown method.
  EXPECT_EQ(run_parplan("compare --job " + q(report_data("job.json"))).exit_code, 2);
  EXPECT_EQ(run_parplan("compare --job " + q(report_data("job.json")) + " --method qlora --out " +
                        q(dir.path()))
                .exit_code,
            2);
}

TEST(PlanCli, ReportOptionWritesTheSameFiles) {
  TempDir dir;
  const CommandResult r = run_parplan("plan --job " + q(report_data("job.json")) +
                                      " --top 3 --report " + q(dir.file("r")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(list_dir(dir.file("r")), kReportFiles);
  EXPECT_NE(r.output.find("best plan:"), std::string::npos);  // the usual output is kept
  const Json json = Json::parse(read_file(dir.file("r/report.json")));
  EXPECT_EQ(json.at("plans").size(), 3u);
  // --json stays pure JSON on stdout with --report.
  const CommandResult j = run_command(std::string("{ '") + PARPLAN_BINARY + "' plan --job " +
                                      q(report_data("job.json")) + " --top 2 --json --report " +
                                      q(dir.file("r2")) + " 2>/dev/null; }");
  ASSERT_EQ(j.exit_code, 0);
  EXPECT_NO_THROW(Json::parse(j.output));
}

TEST(PlanCli, IgnoresTheJobsPlanButNotItsSyntax) {
  TempDir dir;
  // tp*pp = 6 does not divide 16 GPUs: simulate refuses the plan, plan searches its own.
  const std::string job = dir.file("job.json");
  write_file(job, R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 2},
    "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": {"tp": 3, "pp": 2}})");
  CommandResult r = run_parplan("simulate --job " + q(job));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("plan.tp"), std::string::npos) << r.output;
  r = run_parplan("plan --job " + q(job) + " --top 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best plan:"), std::string::npos) << r.output;
  // compare compares the job's plan, so it must be valid there.
  r = run_parplan("compare --job " + q(job) + " --out " + q(dir.file("r")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("plan.tp"), std::string::npos) << r.output;
  // A plan key of the wrong type is still an error for plan.
  write_file(job, R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 2},
    "training": {"global_batch_size": 64, "seq_length": 4096}, "plan": {"tp": "eight"}})");
  r = run_parplan("plan --job " + q(job) + " --top 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("plan.tp"), std::string::npos) << r.output;
}

TEST(ExportCli, PrintsEachFormatAndRejectsUnknownOnes) {
  for (const char* format : {"megatron", "nemo", "torchtitan"}) {
    const CommandResult r = run_parplan("export --job " + q(report_data("job.json")) +
                                        " --format " + format + " --plan-nearest");
    EXPECT_EQ(r.exit_code, 0) << format << "\n" << r.output;
    EXPECT_NE(r.output.find("tp2 pp2 dp4"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("# fits: predicted peak"), std::string::npos) << r.output;
  }
  // A plan predicted not to fit says so before its launch settings.
  TempDir dir;
  const std::string big = dir.file("big.json");
  write_file(big, R"({"model": "llama3.1-405b", "cluster": {"node": "dgx-h100", "num_nodes": 1},
    "training": {"global_batch_size": 8, "seq_length": 8192}, "plan": {"tp": 8}})");
  const CommandResult too_big = run_parplan("export --job " + q(big) + " --format megatron");
  EXPECT_EQ(too_big.exit_code, 0) << too_big.output;
  EXPECT_EQ(too_big.output.find("# DOES NOT FIT: predicted peak"), 0u) << too_big.output;
  // The job's plan keeps Megatron's distributed optimizer (ZeRO-1), which torchtitan lacks.
  const CommandResult refused =
      run_parplan("export --job " + q(report_data("job.json")) + " --format torchtitan");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("plan.zero_stage: found 1; torchtitan supports"), std::string::npos)
      << refused.output;
  const CommandResult nearest = run_parplan("export --job " + q(report_data("job.json")) +
                                            " --format torchtitan --plan-nearest");
  EXPECT_NE(nearest.output.find("# --plan-nearest: plan.zero_stage 1 -> plan.zero_stage 2"),
            std::string::npos)
      << nearest.output;
  const CommandResult megatron =
      run_parplan("export --job " + q(report_data("job.json")) + " --format megatron --plan " +
                  q(report_data("plan_vpp.json")));
  EXPECT_EQ(megatron.exit_code, 0) << megatron.output;
  EXPECT_NE(megatron.output.find("--num-layers-per-virtual-pipeline-stage 4"), std::string::npos)
      << megatron.output;
  EXPECT_EQ(
      run_parplan("export --job " + q(report_data("job.json")) + " --format deepspeed").exit_code,
      2);
  EXPECT_EQ(
      run_parplan("export --job " + q(report_data("missing.json")) + " --format nemo").exit_code,
      1);
}

}  // namespace
}  // namespace parplan::testing
