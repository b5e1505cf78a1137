// `parplan calibrate` and `--calibration`: the calibration file's contents, outputs that say a
// calibration was used, and bad input (no runs, duplicated ids, negative or missing times,
// mixed node types, too few runs, a factor the runs do not exercise, a bad CAL.json) refused
// with the entry named and nothing written.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace parplan {
namespace {

using nlohmann::json;

json load(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// A path in the temporary folder that is this test's own: ctest runs the tests of this file as
// separate processes side by side, and a shared name would be a race.
std::string temp_path(const std::string& name) {
  return testing::TempDir() + "/" + testing::UnitTest::GetInstance()->current_test_info()->name() +
         "_" + name;
}

std::string write(const std::string& name, const json& value) {
  const std::string path = temp_path(name);
  std::ofstream(path) << value.dump(1);
  return path;
}

// The public runs of one source family on one node type (ids "<family>_..."), the first
// `max_runs` of them.
json family_runs(const std::string& family, const std::string& node, size_t max_runs = SIZE_MAX) {
  json out = json::array();
  for (const auto& run : load(std::string(PARPLAN_TEST_DATA) + "/published_runs.json")) {
    const std::string id = run["id"];
    if (out.size() < max_runs && id.rfind(family + "_", 0) == 0 &&
        run["job"]["cluster"]["node"] == node) {
      out.push_back(run);
    }
  }
  return out;
}

// The runs the calibrations below fit: the first six of DGX Cloud's H100 runs (Llama 3.1 on 8
// to 1,152 GPUs), enough for two factors. A calibration refits once per held-out run, so its
// cost grows with the square of the run count and with the runs' size: all twelve, which add
// Grok-1 (MoE), MaxText and Nemotron-4 runs on up to 2,048 GPUs, took 20 times as long (7
// minutes each under the sanitizers). The leave-one-out test (calibrate_loo_test.cpp)
// calibrates MoE groups.
json dgxc_h100_runs() { return family_runs("dgxc", "dgx-h100", 6); }

// Runs calibrate on `runs` and expects it to fail with `code`, naming `expect`, writing nothing.
void expect_refused(const json& runs, int code, const std::vector<std::string>& expect,
                    const std::string& extra = "") {
  const std::string path = write("bad_runs.json", runs);
  const std::string out = temp_path("bad_cal.json");
  std::filesystem::remove(out);
  const auto r = test::run_parplan("calibrate --runs " + path + " --out " + out + extra);
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  for (const auto& e : expect) EXPECT_NE(r.err.find(e), std::string::npos) << e << "\n" << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Calibrate, WritesTheFactorsRunsAndLeaveOneOutFigures) {
  const json runs = dgxc_h100_runs();
  ASSERT_GE(runs.size(), 6u);
  const std::string path = write("dgxc_h100.json", runs);
  const std::string out = temp_path("cal.json");
  const auto r = test::run_parplan("calibrate --runs " + path + " --out " + out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json cal = load(out);
  EXPECT_EQ(json::parse(r.out), cal);
  EXPECT_EQ(cal["format"], "parplan-calibration");
  EXPECT_EQ(cal["node_types"], json::array({"dgx-h100"}));
  EXPECT_EQ(cal["runs"]["ids"].size(), runs.size());
  EXPECT_EQ(cal["runs"]["hash"].get<std::string>().rfind("fnv1a64:", 0), 0u);
  EXPECT_FALSE(cal["parplan_version"].get<std::string>().empty());
  int fitted = 0;
  for (const auto& [name, f] : cal["factors"].items()) {
    EXPECT_LE(f["bounds"][0].get<double>(), f["value"].get<double>()) << name;
    EXPECT_GE(f["bounds"][1].get<double>(), f["value"].get<double>()) << name;
    EXPECT_FALSE(f["reason"].get<std::string>().empty()) << name;
    fitted += f["fitted"].get<bool>() ? 1 : 0;
  }
  EXPECT_LE(fitted, static_cast<int>(runs.size()) / 3);
  EXPECT_TRUE(cal["leave_one_out"]["available"].get<bool>());
  EXPECT_EQ(cal["leave_one_out"]["runs"].size(), runs.size());
  EXPECT_LE(cal["fit"]["calibrated_mape"].get<double>(),
            cal["fit"]["uncalibrated_mape"].get<double>() + 1e-12);

  // The outputs that use it say so.
  json job = runs[0]["job"];
  const std::string job_path = write("cal_job.json", job);
  const auto text = test::run_parplan("simulate --job " + job_path + " --calibration " + out);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("calibration: " + out), std::string::npos) << text.out;
  const auto sim =
      test::run_parplan("simulate --job " + job_path + " --calibration " + out + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_EQ(json::parse(sim.out)["calibration"]["file"], out);
  const auto val =
      test::run_parplan("validate --published " + path + " --calibration " + out + " --json");
  ASSERT_EQ(val.exit_code, 0) << val.err;
  const json v = json::parse(val.out);
  EXPECT_EQ(v["calibration"]["runs_calibrated"], runs.size());
  EXPECT_NEAR(v["mape"].get<double>(), cal["fit"]["calibrated_mape"].get<double>(), 1e-9);
  const auto plan =
      test::run_parplan("plan --job " + job_path + " --top 2 --json --calibration " + out);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(json::parse(plan.out)["calibration"]["file"], out);
  const auto cmp = test::run_parplan("compare --job " + job_path + " --top 1 --out " +
                                     temp_path("cal_cmp") + " --json --calibration " + out);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_EQ(json::parse(cmp.out)["calibration"]["file"], out);

  // A job on another node type is not calibrated silently.
  job["cluster"]["node"] = "dgx-a100-80gb";
  const auto other =
      test::run_parplan("simulate --job " + write("cal_a100.json", job) + " --calibration " + out);
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("node_types"), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("dgx-a100-80gb"), std::string::npos) << other.err;
}

TEST(Calibrate, RequestedFactorChangesThePredictionAndIsNamed) {
  const json runs = dgxc_h100_runs();
  const std::string path = write("dgxc_requested.json", runs);
  const std::string out = temp_path("cal_requested.json");
  const auto r = test::run_parplan("calibrate --runs " + path + " --out " + out +
                                   " --factors compute_throughput_fraction");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double value = load(out)["factors"]["compute_throughput_fraction"]["value"];
  EXPECT_NE(value, 1.0);
  const std::string job_path = write("cal_requested_job.json", runs[0]["job"]);
  const auto before = test::run_parplan("simulate --job " + job_path + " --json");
  const auto after =
      test::run_parplan("simulate --job " + job_path + " --json --calibration " + out);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  const json a = json::parse(after.out);
  EXPECT_NE(a["step_time_s"], json::parse(before.out)["step_time_s"]);
  EXPECT_EQ(a["calibration"]["factors"]["compute_throughput_fraction"], value);
  const auto text = test::run_parplan("simulate --job " + job_path + " --calibration " + out);
  EXPECT_NE(text.out.find("compute_throughput_fraction"), std::string::npos) << text.out;
  // The compare report says so too.
  const std::string dir = temp_path("cal_requested_cmp");
  const auto cmp = test::run_parplan("compare --job " + job_path + " --top 1 --out " + dir +
                                     " --calibration " + out);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  std::ifstream md(dir + "/report.md");
  const std::string report((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("Predicted with a calibration fitted to measured runs"), std::string::npos);
  // So do the launch settings and the cluster-size sweep's page and JSON.
  const auto exported = test::run_parplan("export --job " + job_path +
                                          " --format megatron --plan-nearest --calibration " + out);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find("# calibration: " + out), std::string::npos) << exported.out;
  EXPECT_NE(exported.out.find("compute_throughput_fraction"), std::string::npos) << exported.out;
  const std::string sweep_dir = temp_path("cal_requested_sweep");
  const auto sweep = test::run_parplan("plan --job " + job_path + " --gpus 8,16 --report " +
                                       sweep_dir + " --calibration " + out);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  std::ifstream html(sweep_dir + "/sweep.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("Predicted with a calibration fitted to measured runs"), std::string::npos);
  EXPECT_NE(page.find("compute_throughput_fraction"), std::string::npos);
  EXPECT_EQ(
      load(sweep_dir + "/sweep.json")["calibration"]["factors"]["compute_throughput_fraction"],
      value);
}

TEST(Calibrate, RefusesBadRunsNamingTheEntry) {
  const json runs = dgxc_h100_runs();
  ASSERT_GE(runs.size(), 4u);
  expect_refused(json::array(), 1, {"bad_runs.json", "no runs"});
  json dup = runs;
  dup[2]["id"] = dup[0]["id"];
  expect_refused(dup, 1, {"[2].id", dup[0]["id"].get<std::string>(), "an id no other run has"});
  json negative = runs;
  negative[1]["reference"]["step_time_s"] = -3.0;
  expect_refused(negative, 1, {"[1].reference.step_time_s", "-3"});
  json missing = runs;
  missing[3]["reference"].erase("step_time_s");
  expect_refused(missing, 1, {"[3].reference.step_time_s"});
  json mixed = runs;
  mixed.push_back(family_runs("sc21", "dgx-a100-80gb")[0]);
  expect_refused(mixed, 1, {"node types", "dgx-a100-80gb", "dgx-h100", "--node"});
  // With --node the mixed file is fine (the other node's run is left out).
  const std::string path = write("mixed_runs.json", mixed);
  const auto r = test::run_parplan("calibrate --runs " + path + " --node dgx-h100 --out " +
                                   temp_path("mixed_cal.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Calibrate, RefusesWhatTheRunsCannotSupportWithUsageExit) {
  const json runs = dgxc_h100_runs();
  expect_refused(json::array({runs[0], runs[1]}), 2, {"2 runs", "at least 3"});
  // torchtitan's three single-node runs: nothing crosses a node.
  json single = json::array();
  for (const auto& run : family_runs("torchtitan", "grand-teton-h100-96gb")) {
    if (run["job"]["cluster"].value("num_nodes", 1) == 1) single.push_back(run);
  }
  ASSERT_EQ(single.size(), 3u);
  expect_refused(single, 2, {"inter_node_busbw_fraction", "not exercised"},
                 " --factors inter_node_busbw_fraction");
}

TEST(Calibrate, BadCalibrationFileIsAClearError) {
  const json runs = dgxc_h100_runs();
  const std::string job_path = write("bad_cal_job.json", runs[0]["job"]);
  const std::string cal = write("bad_cal.json", json{{"format", "parplan-calibration"},
                                                     {"node_types", {"dgx-h100"}},
                                                     {"factors", {{"step_overhead_s", 1.0}}}});
  const auto r = test::run_parplan("simulate --job " + job_path + " --calibration " + cal);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("factors.step_overhead_s"), std::string::npos) << r.err;
  const auto missing = test::run_parplan("simulate --job " + job_path + " --calibration " +
                                         temp_path("no_such_cal.json"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no_such_cal.json"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace parplan
