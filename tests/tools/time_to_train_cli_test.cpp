// The run keys end to end: `simulate` prints time to train, goodput and cost only for jobs with
// training.total_tokens; `plan --gpus` sweeps cluster sizes and `--deadline-days` picks the
// cheapest; bad values are input (exit 1) or usage (exit 2) errors naming the key or option.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/json_input.h"
#include "tests/tools/test_support.h"

namespace parplan::testing {
namespace {

std::string q(const std::string& path) { return "'" + path + "'"; }

std::string write_job(TempDir& dir, const std::string& run_keys, int64_t nodes = 4) {
  const std::string path = dir.file("job.json");
  std::ofstream(path) << R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100",
      "num_nodes": )" << nodes
                      << R"(}, "training": {"global_batch_size": 256, "seq_length": 8192)"
                      << (run_keys.empty() ? "" : ", " + run_keys) << "}}";
  return path;
}

TEST(TimeToTrainCli, SimulateJsonHasTheRunKeysWithTheirIdentities) {
  TempDir dir;
  const std::string job = write_job(dir, R"("total_tokens": 1e12, "gpu_hour_usd": 2)");
  const CommandResult r = run_parplan("simulate --json --job " + q(job));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = Json::parse(r.output);
  for (const char* key :
       {"time_to_train_days", "gpu_hours", "energy_mwh", "cost_usd", "goodput", "cluster_mtbf_s",
        "checkpoint_bytes", "checkpoint_write_s", "checkpoint_interval_s"}) {
    ASSERT_TRUE(out.contains(key) && out.at(key).is_number()) << key << "\n" << r.output;
  }
  const double tokens_per_s = out.at("tokens_per_s").get<double>();
  const double goodput = out.at("goodput").get<double>();
  EXPECT_GT(goodput, 0.9);
  EXPECT_LT(goodput, 1.0);
  EXPECT_NEAR(out.at("time_to_train_days").get<double>(), 1e12 / tokens_per_s / goodput / 86400,
              1e-9 * out.at("time_to_train_days").get<double>());
  EXPECT_NEAR(out.at("cost_usd").get<double>(), 2 * out.at("gpu_hours").get<double>(), 1e-6);
  EXPECT_NEAR(out.at("gpu_hours").get<double>(),
              out.at("time_to_train_days").get<double>() * 24 * 32, 1e-6);
}

TEST(TimeToTrainCli, SimulateWithoutTokensPrintsWhatItAlwaysDid) {
  TempDir dir;
  const CommandResult r = run_parplan("simulate --json --job " + q(write_job(dir, "")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = Json::parse(r.output);
  EXPECT_FALSE(out.contains("time_to_train_days"));
  EXPECT_FALSE(out.contains("goodput"));
  const CommandResult text = run_parplan("simulate --job " + q(write_job(dir, "")));
  EXPECT_EQ(text.output.find("time to train"), std::string::npos) << text.output;
}

TEST(TimeToTrainCli, SimulateTextShowsTheRun) {
  TempDir dir;
  const CommandResult r = run_parplan(
      "simulate --job " + q(write_job(dir, R"("total_tokens": 1e12, "gpu_hour_usd": 2)")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("time to train"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GPU-hours"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cluster MTBF"), std::string::npos) << r.output;
}

TEST(TimeToTrainCli, SweepPicksTheCheapestSizeWithinTheDeadline) {
  TempDir dir;
  const std::string job = write_job(dir, R"("total_tokens": 1e11, "gpu_hour_usd": 2)");
  const CommandResult r = run_parplan("plan --job " + q(job) + " --gpus 8:32:8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json all = Json::parse(r.output);
  ASSERT_EQ(all.at("sweep").size(), 4u);
  // The deadline between the fastest and the slowest size: the cheapest row meeting it.
  double slowest = 0, fastest = 1e300;
  for (const auto& row : all.at("sweep")) {
    slowest = std::max(slowest, row.at("time_to_train_days").get<double>());
    fastest = std::min(fastest, row.at("time_to_train_days").get<double>());
  }
  const double deadline = (slowest + fastest) / 2;
  const CommandResult chosen = run_parplan("plan --job " + q(job) + " --gpus 8,16,24,32 --json " +
                                           "--deadline-days " + std::to_string(deadline));
  ASSERT_EQ(chosen.exit_code, 0) << chosen.output;
  const Json out = Json::parse(chosen.output);
  ASSERT_TRUE(out.at("chosen").is_number()) << chosen.output;
  double cheapest = 1e300;
  int64_t expected = 0;
  for (const auto& row : out.at("sweep")) {
    if (row.at("time_to_train_days").get<double>() > deadline) continue;
    if (row.at("gpu_hours").get<double>() < cheapest) {
      cheapest = row.at("gpu_hours").get<double>();
      expected = row.at("num_gpus").get<int64_t>();
    }
  }
  EXPECT_EQ(out.at("chosen").get<int64_t>(), expected);
  const CommandResult text = run_parplan("plan --job " + q(job) + " --gpus 8:32 --deadline-days " +
                                         std::to_string(deadline));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("cheapest size within"), std::string::npos) << text.output;
}

TEST(TimeToTrainCli, TheReportHasATimeToTrainSectionOnlyWithTokens) {
  TempDir dir;
  const std::string out = dir.file("report");
  const std::string job = write_job(dir, R"("total_tokens": 1e11, "gpu_hour_usd": 2)");
  const CommandResult r = run_parplan("compare --job " + q(job) + " --top 2 --out " + q(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_file(out + "/report.html");
  EXPECT_NE(html.find("<h2>Time to train and cost</h2>"), std::string::npos);
  EXPECT_NE(html.find("cluster MTBF"), std::string::npos);
  const Json json = Json::parse(read_file(out + "/report.json"));
  EXPECT_TRUE(json.at("plans")[0].at("time_to_train_days").is_number());
  TempDir plain;
  const CommandResult without = run_parplan("compare --job " + q(write_job(plain, "")) +
                                            " --top 1 --out " + q(plain.file("report")));
  ASSERT_EQ(without.exit_code, 0) << without.output;
  EXPECT_EQ(read_file(plain.file("report") + "/report.html").find("Time to train"),
            std::string::npos);
}

TEST(TimeToTrainCli, SweepReportHasTheChartsAndTheJson) {
  TempDir dir;
  const std::string out = dir.file("sweep");
  const std::string job = write_job(dir, R"("total_tokens": 1e11)");
  const CommandResult r =
      run_parplan("plan --job " + q(job) + " --gpus 8:64 --report " + q(out) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_file(out + "/sweep.html");
  EXPECT_NE(html.find("Days to train against GPUs"), std::string::npos);
  std::size_t svgs = 0;
  for (std::size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++svgs;
  EXPECT_EQ(svgs, 2u);
  const Json json = Json::parse(read_file(out + "/sweep.json"));
  EXPECT_EQ(json.at("sweep").size(), 4u);
  EXPECT_TRUE(json.contains("knee_gpus"));
}

TEST(TimeToTrainCli, BadSweepsAndRunKeysAreErrors) {
  TempDir dir;
  const std::string job = write_job(dir, R"("total_tokens": 1e11)");
  const CommandResult part_node = run_parplan("plan --job " + q(job) + " --gpus 12,16");
  EXPECT_EQ(part_node.exit_code, 1) << part_node.output;
  EXPECT_NE(part_node.output.find("--gpus"), std::string::npos) << part_node.output;
  EXPECT_NE(part_node.output.find("whole nodes"), std::string::npos) << part_node.output;
  EXPECT_EQ(run_parplan("plan --job " + q(job) + " --gpus 32:8").exit_code, 1);
  EXPECT_EQ(run_parplan("plan --job " + q(job) + " --gpus 8:x").exit_code, 1);
  EXPECT_EQ(run_parplan("plan --job " + q(job) + " --deadline-days 3").exit_code, 2);
  const std::string no_tokens = write_job(dir, "");
  const CommandResult deadline =
      run_parplan("plan --job " + q(no_tokens) + " --gpus 8,16 --deadline-days 3");
  EXPECT_EQ(deadline.exit_code, 1) << deadline.output;
  EXPECT_NE(deadline.output.find("training.total_tokens"), std::string::npos) << deadline.output;
  const CommandResult price =
      run_parplan("simulate --job " + q(write_job(dir, R"("gpu_hour_usd": 2)")));
  EXPECT_EQ(price.exit_code, 1) << price.output;
  EXPECT_NE(price.output.find("training.gpu_hour_usd"), std::string::npos) << price.output;
}

}  // namespace
}  // namespace parplan::testing
