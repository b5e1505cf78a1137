// `parplan validate --published` on the public published runs: the gate on prediction
// error. Thresholds are regression gates at the level reached so far; the issue targets
// (core MAPE <= 7%, p90 <= 15%; all runs MAPE <= 9%; memory median <= 10%) are reported by
// the test output and tracked in the issue notes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>

#include "cli_test_util.h"
#include "planner/regret.h"

namespace parplan {
namespace {

// The public published runs, parsed.
nlohmann::json public_runs() {
  std::ifstream in(std::string(PARPLAN_TEST_DATA) + "/published_runs.json");
  return nlohmann::json::parse(in);
}

// Writes a runs file for one test into the test temp folder and returns its path.
std::string write_runs(const std::string& name, const nlohmann::json& runs) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << runs.dump();
  return path;
}

nlohmann::json validate_json() {
  const auto r = test::run_parplan(std::string("validate --published ") + PARPLAN_TEST_DATA +
                                   "/published_runs.json --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {{"runs", nlohmann::json::array()}};  // the caller's checks fail
  return nlohmann::json::parse(r.out);
}

TEST(ValidatePublished, ReportsEveryRunWithContractKeys) {
  const auto v = validate_json();
  ASSERT_TRUE(v.contains("runs"));
  EXPECT_EQ(v["runs"].size(), 65u);
  for (const auto& run : v["runs"]) {
    EXPECT_TRUE(run.contains("id"));
    EXPECT_GT(run["predicted_step_time_s"].get<double>(), 0.0);
    EXPECT_GT(run["reference_step_time_s"].get<double>(), 0.0);
  }
  EXPECT_TRUE(v.contains("mape"));
  EXPECT_TRUE(v.contains("median_ape"));
  EXPECT_EQ(v["rejected"].size(), 0u) << v["rejected"].dump(2);
}

// One entry we cannot read (a node preset we do not have) and one we cannot place (tp*pp*dp
// off the GPU count) beside a good one carrying an extra key: the good one is still
// predicted (its extra key noted), the two are listed with the file, entry and key path of
// their error, and only --strict turns that into exit 1.
TEST(ValidatePublished, SetsAsideEntriesItCannotEvaluate) {
  const auto all = public_runs();
  nlohmann::json runs = nlohmann::json::array({all[0], all[1], all[2]});
  runs[0]["tags"] = {"metadata the format does not define"};  // ignored, with a note
  runs[1]["id"] = "unknown_node";
  runs[1]["job"]["cluster"]["node"] = "tpu-v5p";
  runs[2]["id"] = "bad_degrees";
  runs[2]["job"]["plan"]["tp"] = 3;
  const std::string path = write_runs("partly_bad_runs.json", runs);

  const auto r = test::run_parplan("validate --published " + path + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out);
  ASSERT_EQ(v["runs"].size(), 1u);
  EXPECT_EQ(v["runs"][0]["id"], all[0]["id"]);
  ASSERT_EQ(v["rejected"].size(), 2u);
  EXPECT_EQ(v["rejected"][0]["index"], 1);
  EXPECT_EQ(v["rejected"][0]["id"], "unknown_node");
  EXPECT_NE(v["rejected"][0]["error"].get<std::string>().find("[1].job: cluster.node"),
            std::string::npos)
      << v["rejected"][0]["error"];
  EXPECT_EQ(v["rejected"][1]["id"], "bad_degrees");
  EXPECT_NE(v["rejected"][1]["error"].get<std::string>().find("plan."), std::string::npos);
  EXPECT_NE(r.err.find("2 of 3 entries"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ignored: [0].tags"), std::string::npos) << r.err;

  const auto text = test::run_parplan("validate --published " + path);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("entries left out (errors on stderr): 2"), std::string::npos);
  EXPECT_NE(text.err.find("tpu-v5p"), std::string::npos) << text.err;

  const auto strict = test::run_parplan("validate --published " + path + " --strict");
  EXPECT_EQ(strict.exit_code, 1);

  // Nothing left to evaluate is a failure.
  const std::string none = write_runs("all_bad_runs.json", nlohmann::json::array({runs[1]}));
  EXPECT_EQ(test::run_parplan("validate --published " + none).exit_code, 1);
}

TEST(ValidatePublished, StepTimeErrorGate) {
  const auto v = validate_json();
  const auto& core = v["core"];
  const auto& all = v["all"];
  std::printf("core (no MoE/cp/FSDP): n=%d MAPE %.1f%% median %.1f%% p90 %.1f%% max %.1f%%\n",
              core["count"].get<int>(), 100 * core["mape"].get<double>(),
              100 * core["median_ape"].get<double>(), 100 * core["p90_ape"].get<double>(),
              100 * core["max_ape"].get<double>());
  std::printf("all runs: n=%d MAPE %.1f%% median %.1f%% p90 %.1f%%\n", all["count"].get<int>(),
              100 * all["mape"].get<double>(), 100 * all["median_ape"].get<double>(),
              100 * all["p90_ape"].get<double>());
  // A constant-MFU estimate scores 12.3% on the core runs and 24% on all: we must beat it.
  // 6.3% -> 4.1% (core) and 7.7% -> 6.7% (all) when BLOOM's runs got the Jean Zay preset.
  EXPECT_LE(core["mape"].get<double>(), 0.045);    // time-model issue target: 7%
  EXPECT_LE(core["p90_ape"].get<double>(), 0.15);  // time-model issue target
  // 7.2% -> 6.3% when the ring model gained NCCL's LL bandwidth cap and LL128 (SC21's ZeRO-3
  // 175B on 1,536 GPUs: -39% -> -19%).
  EXPECT_LE(all["mape"].get<double>(), 0.066);  // beyond-3D issue target: 9%
  // 0.14 before the MaxText Llama 2 70B run (dgxc_maxtext_llama2_70b_bf16_2048gpu) got the
  // rematerialisation its source runs (remat_policy save_qkv_proj, encoded as recompute full):
  // predicted 5% too fast without it, 24% too slow with it (issue 24 point 5).
  EXPECT_LE(all["p90_ape"].get<double>(), 0.145);  // beyond-3D issue target: 20%
}

// Whole benchmark tables of several frameworks (tests/data/benchmark_tables, each entry citing
// its table row): the same code on many more runs of one software stack than the public set
// holds, so a mechanism that helps one run and hurts its neighbours shows. Gates at the level
// reached; the Megatron-Bridge table's fine-grained MoE rows on B200 and H100 are the known
// gap (host-bound MoE layers at small micro-batches are not modelled).
struct TableGate {
  const char* file;
  size_t runs;
  double mape;
  double p90;
};

void PrintTo(const TableGate& gate, std::ostream* os) { *os << gate.file; }

class BenchmarkTable : public testing::TestWithParam<TableGate> {};

TEST_P(BenchmarkTable, StepTimeErrorGate) {
  const TableGate& gate = GetParam();
  const auto r = test::run_parplan(std::string("validate --published ") + PARPLAN_TEST_DATA +
                                   "/benchmark_tables/" + gate.file + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto v = nlohmann::json::parse(r.out);
  ASSERT_EQ(v["runs"].size(), gate.runs);
  const auto& all = v["all"];
  std::printf("%s: n=%d MAPE %.1f%% median %.1f%% p90 %.1f%% max %.1f%%\n", gate.file,
              all["count"].get<int>(), 100 * all["mape"].get<double>(),
              100 * all["median_ape"].get<double>(), 100 * all["p90_ape"].get<double>(),
              100 * all["max_ape"].get<double>());
  EXPECT_LE(all["mape"].get<double>(), gate.mape);
  EXPECT_LE(all["p90_ape"].get<double>(), gate.p90);
}

INSTANTIATE_TEST_SUITE_P(Frameworks, BenchmarkTable,
                         testing::Values(TableGate{"llm_foundry_mpt.json", 60, 0.057, 0.11},
                                         // The Hopper presets' sustained clock is calibrated on
                                         // this table (hardware_profiles/nodes/dgx-h100.json), so
                                         // it is not evidence; the other tables are.
                                         TableGate{"nemo_2407_h100.json", 10, 0.027, 0.05},
                                         // Its small MoE rows (Qwen3-30B-A3B, h 2048) run 2x
                                         // slower than predicted; a launch per expert GEMM used
                                         // to hide part of that, grouped GEMMs (the recipes'
                                         // --moe-grouped-gemm) no longer do: 0.164 -> 0.172;
                                         // the recipes' all-to-all overlap, now recorded, moves
                                         // two of these host-bound rows further: 0.179.
                                         TableGate{"mbridge_2511.json", 16, 0.185, 0.60},
                                         // Blackwell in early NeMo 2 containers: every row slower
                                         // than predicted (docs/validation.md).
                                         TableGate{"nemo_2502.json", 8, 0.135, 0.25},
                                         TableGate{"nemo_2504.json", 7, 0.135, 0.22},
                                         TableGate{"megascale_2402.json", 8, 0.05, 0.09},
                                         // Runs the project found for its weakest classes
                                         // (ZeRO-3 without model parallelism, 8k+ GPUs, MoE on
                                         // H100, V100, BLOOM on Jean Zay; docs/validation.md):
                                         // gated at the level reached so it cannot grow.
                                         // 25.8% -> 19.6% with the MoE dispatchers modelled;
                                         // 17.0% with DeepSpeed's blocking ZeRO-3 fetch,
                                         // 16.3% with DeepEP's two permutation copies,
                                         // 16.2% with the fetch's exposed reduce-scatters,
                                         // 16.0% with the combined 1F1B's unpaired chunks and
                                         // DeepEP's GEMM cost; 14.1% with BLOOM's runs on
                                         // the Jean Zay preset (its measured Omni-Path
                                         // network); 13.6% with tr1-13B's runs on Jean
                                         // Zay's V100 nodes (and two more of them); 12.6%
                                         // with NCCL's LL cap and LL128 in the ring model
                                         // (SC21's ZeRO-3 rows); 13.1% with ZeRO-3's
                                         // expert gathers and reduce-scatters over expert-dp
                                         // (a Megatron-FSDP and an AutoModel FSDP2 row, both
                                         // already slower than measured for other reasons,
                                         // now slower still); 12.9% with a latency for each
                                         // gradient bucket (MLPerf's 8k-11k GPU runs); gate
                                         // 0.13.
                                         TableGate{"found_runs.json", 43, 0.13, 0.35},
                                         // Megatron-Bridge's archived releases, each row's
                                         // recipe read at the release's tag: the MoE rows on
                                         // B200, B300 and H100 run up to 2.8x slower than
                                         // predicted and vary 2x between releases (software,
                                         // not hardware); GB300's sustained clock is fitted on
                                         // its rows of 26.02-26.06.01 (its preset's source).
                                         TableGate{"mbridge_2509.json", 26, 0.15, 0.31},
                                         TableGate{"mbridge_2602.json", 29, 0.185, 0.57},
                                         TableGate{"mbridge_260201.json", 28, 0.15, 0.36},
                                         TableGate{"mbridge_2604.json", 28, 0.125, 0.33},
                                         TableGate{"mbridge_260401.json", 30, 0.12, 0.31},
                                         TableGate{"mbridge_2606.json", 19, 0.115, 0.29},
                                         TableGate{"mbridge_260601.json", 8, 0.20, 0.47},
                                         TableGate{"mbridge_2608.json", 8, 0.11, 0.19}),
                         [](const testing::TestParamInfo<TableGate>& info) {
                           std::string name = info.param.file;
                           return name.substr(0, name.find('.'));
                         });

TEST(ValidatePublished, MemoryErrorGate) {
  const auto v = validate_json();
  const auto& mem = v["memory"];
  std::printf("peak memory: n=%d median %.1f%% MAPE %.1f%%\n", mem["count"].get<int>(),
              100 * mem["median_ape"].get<double>(), 100 * mem["mape"].get<double>());
  EXPECT_LE(mem["median_ape"].get<double>(), 0.10);  // beyond-3D issue target
  EXPECT_LE(mem["mape"].get<double>(), 0.09);
  std::printf("published plans predicted not to fit: %d\n",
              v["published_plans_not_fitting"].get<int>());
}

// Published runs predicted not to fit although they trained, each with the reason the memory
// model or the job cannot follow. Every other published run must fit.
const std::map<std::string, std::string>& runs_allowed_not_to_fit() {
  static const std::map<std::string, std::string> allowed = {
      {"mbridge2511_gb200_LLAMA3-70B_64gpu",
       "199 of 185 GiB with the recipe's 40 offloaded layers: the 15% allocator reserve (27 GiB) "
       "and the 12 GiB logits buffer of the fused TE cross-entropy are not modelled per recipe"},
      {"dgxc_llama31_405b_bf16_576gpu",
       "83 of 80 GiB: the dgxc NeMo config (recompute, gradient dtype) was not found; with fp32 "
       "gradients the buffer alone is 22 GiB"},
      {"dgxc_nemotron4_340b_fp8_128gpu",
       "92 of 80 GiB: the dgxc NeMo config (gradient dtype, recompute) was not found; NeMo's fp8 "
       "performance scripts reduce gradients in bf16, which would leave 81 GiB"},
      {"deepseek_v3_2048gpu",
       "144 of 80 GiB: DeepSeek's own framework caches activations in fp8 and keeps MLA, which "
       "this job encodes as plain attention over all-MoE layers (report Sec 3.3)"},
  };
  return allowed;
}

// The error model of a file without runs is written, with its per-file figures (no run), and
// the command succeeds: nothing to count is not an error.
TEST(ValidatePublished, ErrorModelOfAFileWithoutRunsIsWritten) {
  const std::string runs = write_runs("no_runs.json", nlohmann::json::array());
  const std::string out = testing::TempDir() + "/no_runs_error_model.json";
  const auto r = test::run_parplan("validate --published " + runs + " --write-error-model " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  const auto model = nlohmann::json::parse(in);
  EXPECT_EQ(model["runs"].size(), 0u);
  EXPECT_EQ(model["leave_one_family_out"]["step_time"]["by_file"][runs]["runs"], 0);
}

// Every published plan ran, so a prediction that it does not fit is a memory-model error or
// a setting the source left out of the job (recomputation, offloading, gradient dtype), and
// it hides feasible plans from the planner.
TEST(ValidatePublished, EveryPublishedRunFits) {
  const auto v = validate_json();
  const auto& allowed = runs_allowed_not_to_fit();
  std::set<std::string> seen;
  for (const auto& run : v["runs"]) {
    if (!run.contains("fits")) continue;  // set aside: nothing predicted
    const auto id = run["id"].get<std::string>();
    seen.insert(id);
    const bool excepted = allowed.count(id) > 0;
    if (!excepted) {
      EXPECT_TRUE(run["fits"].get<bool>())
          << id << " ran but is predicted not to fit: " << run["predicted_memory_gib"] << " GiB";
    } else {
      // An exception that fits now is stale: remove it.
      EXPECT_FALSE(run["fits"].get<bool>()) << id << " fits now; drop it from the exceptions";
    }
  }
  for (const auto& [id, reason] : allowed) {
    EXPECT_TRUE(seen.count(id) > 0) << "exception " << id << " (" << reason << ") is no run";
  }
}

// validate --planner --json over the public runs with these ids, in a file of its own.
nlohmann::json planner_json_of(const std::vector<std::string>& ids, const std::string& name) {
  nlohmann::json picked = nlohmann::json::array();
  for (const auto& run : public_runs()) {
    const auto id = run["id"].get<std::string>();
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) picked.push_back(run);
  }
  EXPECT_EQ(picked.size(), ids.size());
  const auto r =
      test::run_parplan("validate --published " + write_runs(name, picked) + " --planner --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return {{"runs", nlohmann::json::array()}};  // the caller's checks fail
  return nlohmann::json::parse(r.out);
}

TEST(ValidatePublished, PlannerRegretExplainsLargeClaims) {
  // Two runs: one whose published plan our search matches (Llama-2 7B, dp8 on one DGX H100),
  // one where the search claims a large gain (the 2020 1B run with full recompute).
  const auto v = planner_json_of({"nemo2407_h100_LLAMA2-7B_8gpu", "megatron2020_a100_1B_mp1"},
                                 "two_published_runs.json");
  ASSERT_EQ(v["runs"].size(), 2u);
  for (const auto& run : v["runs"]) {
    const double regret = run["regret"].get<double>();
    EXPECT_GE(regret, 0.0);
    // Keeping the published features searches a subset of the space: never a larger regret.
    EXPECT_LE(run["same_features_regret"].get<double>(), regret + 1e-12);
    const auto why = run["why"].get<std::string>();
    if (regret > planner::kRegretClaimThreshold) {
      // The explanation names the breakdown part and the plan key behind the gain.
      EXPECT_NE(why.find("recompute"), std::string::npos) << why;
      EXPECT_NE(why.find("faster than"), std::string::npos) << why;
    } else {
      EXPECT_TRUE(why.empty()) << why;
    }
  }
  EXPECT_DOUBLE_EQ(v["within_10_percent"].get<double>(), 0.5);
  // The one claim is held against the highest MFU measured on its GPU in the file: only its
  // own run is on an A100, and the claim is above what that run measured.
  EXPECT_EQ(v["claims_above_10_percent"].get<int>(), 1);
  EXPECT_EQ(v["claims_within_measured_mfu"].get<int>(), 0);
  // The claim an expert could accept: Llama-2 7B's best plan is its published plan, predicted
  // within 15% of the measured time; the 1B run's best plan is predicted over 15% faster than
  // the run measured.
  for (const auto& run : v["runs"]) {
    const bool defensible = run["best_plan_defensible"].get<bool>();
    EXPECT_EQ(defensible, run["id"] == "nemo2407_h100_LLAMA2-7B_8gpu") << run["id"];
    EXPECT_EQ(defensible, run["best_plan_over_measured"].get<double>() <= 0.15 &&
                              run["best_plan_step_time_s"].get<double>() <=
                                  run["published_plan_step_time_s"].get<double>());
  }
  EXPECT_DOUBLE_EQ(v["defensible_within_15_percent_of_measured"].get<double>(), 0.5);
}

TEST(ValidatePublished, PlannerClaimsAreHeldAgainstTheHighestMfuMeasuredOnTheGpu) {
  // The 2020 1B run (fp16) claims ~47% MFU; MPT-13B on the same A100s (bf16, the same
  // 16-bit peak) measured ~58%: the claim is within what was measured there.
  const auto v = planner_json_of({"mosaic_a100_80gb_mpt13b_2048_8gpu", "megatron2020_a100_1B_mp1"},
                                 "a100_published_runs.json");
  ASSERT_EQ(v["runs"].size(), 2u);
  for (const auto& run : v["runs"]) {
    EXPECT_EQ(run["highest_measured_mfu_run"].get<std::string>(),
              "mosaic_a100_80gb_mpt13b_2048_8gpu");
    EXPECT_GT(run["highest_measured_mfu_same_gpu"].get<double>(), 0.5);
    EXPECT_LT(run["highest_measured_mfu_same_gpu"].get<double>(), 0.65);
  }
  EXPECT_EQ(v["claims_above_10_percent"].get<int>(), 1);
  EXPECT_EQ(v["claims_within_measured_mfu"].get<int>(), 1);
}

}  // namespace
}  // namespace parplan
