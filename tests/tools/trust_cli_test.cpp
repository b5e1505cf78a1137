// How far to trust a prediction, end to end (tools/prediction_trust.h, docs/intervals.md):
// simulate's 80% intervals and extrapolations (JSON and text), and plan's default memory
// headroom from the embedded error model, with --max-memory-fraction overriding it.
#include <gtest/gtest.h>

#include <fstream>

#include "core/json_input.h"
#include "tests/tools/test_support.h"
#include "tools/prediction_trust.h"

namespace parplan::testing {
namespace {

std::string q(const std::string& path) { return "'" + path + "'"; }

std::string job_text(const std::string& node, int nodes, const std::string& plan) {
  return R"({"model": "llama3.1-70b", "framework": "megatron-core", "cluster": {"node": ")" + node +
         R"(", "num_nodes": )" + std::to_string(nodes) +
         R"(}, "training": {"global_batch_size": 128, "seq_length": 4096}, "plan": )" + plan + "}";
}

constexpr const char* kPlan =
    R"({"tp": 8, "pp": 4, "micro_batch_size": 1, "sequence_parallel": true,
        "recompute": "selective", "zero_stage": 1})";

TEST(TrustCli, SimulateGivesIntervalsAroundItsPrediction) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << job_text("dgx-h100", 8, kPlan);
  const CommandResult r = run_parplan("simulate --job " + q(job) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = parse_json(r.output, "simulate output");
  const Json& step = out.at("step_time_interval_s");
  ASSERT_EQ(step.size(), 2u) << r.output;
  EXPECT_GT(step[0].get<double>(), 0.0);
  EXPECT_LT(step[0].get<double>(), step[1].get<double>());
  // The interval is the prediction scaled by the class's residual quantiles: within a factor
  // of two either way on the public runs.
  const double predicted = out.at("step_time_s").get<double>();
  EXPECT_GT(step[0].get<double>(), predicted / 2);
  EXPECT_LT(step[1].get<double>(), predicted * 2);
  EXPECT_EQ(out.at("peak_memory_interval_gib").size(), 2u);
  EXPECT_GE(out.at("interval_basis").at("step_time").at("runs").get<int>(), 9);
  EXPECT_TRUE(out.at("extrapolations").is_array());

  const CommandResult text = run_parplan("simulate --job " + q(job));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("80% interval   step "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("extrapolates   "), std::string::npos) << text.output;
}

// Qwen3-30B-A3B on 16 H100s as Megatron-Bridge 26.02 ran it (tests/data/benchmark_tables/
// mbridge_2602.json): the 12 MoE runs of its class on Hopper at small scale all ran slower
// than predicted when this was written, so the interval lay above the prediction.
constexpr const char* kQwen3SmallMoeJob = R"({
  "framework": "megatron-core",
  "model": "qwen3-30b-a3b",
  "cluster": {"node": "dgx-h100", "num_gpus": 16},
  "training": {"global_batch_size": 1024, "seq_length": 4096, "precision": "fp8",
               "grad_reduce_in_fp32": false},
  "plan": {"tp": 1, "pp": 2, "dp": 8, "cp": 1, "ep": 8, "vpp": 12, "micro_batch_size": 1,
           "etp": 1, "moe_dispatcher": "deepep", "moe_a2a_overlap": true}
})";

// The text says when the prediction lies outside its own interval, and only then.
TEST(TrustCli, APredictionOutsideItsIntervalIsSaid) {
  TempDir dir;
  int outside = 0;
  for (const std::string& text : {job_text("dgx-h100", 8, kPlan), std::string(kQwen3SmallMoeJob)}) {
    const std::string job = dir.file("job.json");
    std::ofstream(job) << text;
    const CommandResult r = run_parplan("simulate --job " + q(job) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Json out = parse_json(r.output, "simulate output");
    const double predicted = out.at("step_time_s").get<double>();
    const Json& step = out.at("step_time_interval_s");
    ASSERT_EQ(step.size(), 2u) << r.output;
    const bool below = predicted < step[0].get<double>();
    const bool above = predicted > step[1].get<double>();
    outside += below || above;
    const CommandResult t = run_parplan("simulate --job " + q(job));
    ASSERT_EQ(t.exit_code, 0) << t.output;
    EXPECT_EQ(
        t.output.find("the step-time prediction lies below its interval") != std::string::npos,
        below)
        << t.output;
    EXPECT_EQ(
        t.output.find("the step-time prediction lies above its interval") != std::string::npos,
        above)
        << t.output;
  }
  // Both inside would leave the note untested here (TrustNote below tests it either way):
  // replace the Qwen3 job by one whose class the model still misses in one direction.
  EXPECT_GE(outside, 1) << "neither job's prediction lies outside its interval any more";
}

// The note itself, on made-up intervals: which side, which word, and nothing when inside.
TEST(TrustNote, SaysWhichSideOfItsIntervalAPredictionLies) {
  const planner::PredictionInterval interval{10.0, 20.0, "class", 12};
  EXPECT_EQ(tools::outside_interval_note(15.0, interval, "step-time"), "");
  EXPECT_EQ(tools::outside_interval_note(10.0, interval, "step-time"), "");
  EXPECT_EQ(tools::outside_interval_note(20.0, interval, "step-time"), "");
  EXPECT_EQ(tools::outside_interval_note(9.0, std::nullopt, "step-time"), "");
  EXPECT_EQ(tools::outside_interval_note(9.0, interval, "step-time"),
            "the step-time prediction lies below its interval: at least nine in ten comparable "
            "validation runs measured more than predicted");
  EXPECT_EQ(tools::outside_interval_note(21.0, interval, "peak-memory"),
            "the peak-memory prediction lies above its interval: at least nine in ten comparable "
            "validation runs measured less than predicted");
}

TEST(TrustCli, AGpuWithoutValidationRunsIsNamed) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << job_text("mi300x-8x", 8, kPlan);
  const CommandResult r = run_parplan("simulate --job " + q(job) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = parse_json(r.output, "simulate output");
  bool named = false;
  for (const Json& x : out.at("extrapolations")) {
    named = named || (x.at("kind") == "gpu" &&
                      x.at("message").get<std::string>().find("MI300X") != std::string::npos);
  }
  EXPECT_TRUE(named) << out.at("extrapolations").dump();
  const CommandResult text = run_parplan("simulate --job " + q(job));
  EXPECT_NE(text.output.find("extrapolates   MI300X"), std::string::npos) << text.output;
}

TEST(TrustCli, APlanItsFrameworkCannotLaunchIsNamed) {
  // Megatron-LM (2020-2021) has no ZeRO-3: simulate still predicts the plan, and says that it
  // costs mechanisms the framework does not have. A plan it runs gets no such entry.
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << R"({"model": "llama2-7b", "framework": "megatron-lm",
      "cluster": {"node": "dgx-a100-80gb", "num_nodes": 2},
      "training": {"global_batch_size": 32, "seq_length": 2048},
      "plan": {"tp": 1, "micro_batch_size": 2, "zero_stage": 3}})";
  const CommandResult r = run_parplan("simulate --job " + q(job) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = parse_json(r.output, "simulate output");
  ASSERT_FALSE(out.at("extrapolations").empty()) << r.output;
  const Json& first = out.at("extrapolations").front();
  EXPECT_EQ(first.at("kind"), "framework-support");
  EXPECT_NE(first.at("message").get<std::string>().find("framework-zero-stage"), std::string::npos)
      << first.dump();
  const CommandResult text = run_parplan("simulate --job " + q(job));
  EXPECT_NE(text.output.find("extrapolates   megatron-lm cannot launch this plan"),
            std::string::npos)
      << text.output;

  std::ofstream(job) << job_text("dgx-h100", 8, kPlan);
  const CommandResult supported = run_parplan("simulate --job " + q(job) + " --json");
  ASSERT_EQ(supported.exit_code, 0) << supported.output;
  const Json supported_out = parse_json(supported.output, "simulate output");
  for (const Json& x : supported_out.at("extrapolations")) {
    EXPECT_NE(x.at("kind"), "framework-support") << x.dump();
  }
}

TEST(TrustCli, PlanKeepsTheMemoryHeadroomOfTheErrorModel) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  std::ofstream(job) << job_text("dgx-h100", 8, "{}");
  const Json model =
      load_json_file(std::string(PARPLAN_SOURCE_DIR) + "/planner/data/error_model.json");
  const double headroom = model.at("default_max_memory_fraction").get<double>();
  ASSERT_LT(headroom, 1.0);
  const CommandResult r = run_parplan("plan --job " + q(job) + " --json --top 5 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = parse_json(r.output, "plan output");
  EXPECT_NEAR(out.at("max_memory_fraction").get<double>(), headroom, 1e-6);
  ASSERT_FALSE(out.at("plans").empty());
  for (const Json& plan : out.at("plans")) {
    EXPECT_LE(plan.at("peak_memory_gib").get<double>(), headroom * 79.6 + 1e-9) << plan.dump();
    EXPECT_EQ(plan.at("step_time_interval_s").size(), 2u);
  }
  const CommandResult full =
      run_parplan("plan --job " + q(job) + " --json --top 1 --max-memory-fraction 1.0");
  ASSERT_EQ(full.exit_code, 0) << full.output;
  EXPECT_EQ(parse_json(full.output, "plan output").at("max_memory_fraction").get<double>(), 1.0);

  const CommandResult text = run_parplan("plan --job " + q(job) + " --top 1");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("headroom for the memory model's measured error"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("80% interval   step "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("extrapolates   "), std::string::npos) << text.output;
}

// validate --published holds every run against its 80% interval; a run of the embedded error
// model gets it from the other source families only, so the coverage of a data file is the
// error model's leave-one-family-out figure for that file (docs/intervals.md).
TEST(TrustCli, ValidateCoverageIsTheLeaveOneFamilyOutFigureOfTheFile) {
  const CommandResult r = run_parplan(std::string("validate --published ") + PARPLAN_TEST_DATA +
                                      "/published_runs.json --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = parse_json(r.output, "validate output");
  const Json& coverage = out.at("step_time_interval_coverage");
  const Json model =
      load_json_file(std::string(PARPLAN_SOURCE_DIR) + "/planner/data/error_model.json");
  const Json& by_file = model.at("leave_one_family_out")
                            .at("step_time")
                            .at("by_file")
                            .at("tests/data/published_runs.json");
  EXPECT_EQ(coverage.at("runs").get<int>(), by_file.at("runs").get<int>());
  EXPECT_EQ(coverage.at("runs_with_own_family_left_out").get<int>(),
            coverage.at("runs").get<int>());
  // The file stores six digits.
  EXPECT_NEAR(coverage.at("coverage").get<double>(), by_file.at("coverage").get<double>(), 1e-6);
  EXPECT_NEAR(coverage.at("median_half_width").get<double>(),
              by_file.at("median_half_width").get<double>(), 1e-5);
  int inside = 0;
  for (const Json& run : out.at("runs")) {
    const Json& iv = run.at("step_time_interval_s");
    ASSERT_EQ(iv.size(), 2u) << run.dump();
    const double reference = run.at("reference_step_time_s").get<double>();
    const bool in = reference >= iv[0].get<double>() && reference <= iv[1].get<double>();
    EXPECT_EQ(run.at("inside_step_time_interval").get<bool>(), in) << run.dump();
    inside += in ? 1 : 0;
  }
  EXPECT_EQ(coverage.at("inside").get<int>(), inside);
}

// A run the error model does not hold (a user's own) is held against the interval simulate
// gives its job: nothing is left out.
TEST(TrustCli, ValidateHoldsAUsersRunAgainstTheIntervalSimulateGives) {
  TempDir dir;
  const std::string job = dir.file("job.json");
  const std::string job_json = job_text("dgx-h100", 8, kPlan);
  std::ofstream(job) << job_json;
  const CommandResult sim = run_parplan("simulate --job " + q(job) + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  const Json expected = parse_json(sim.output, "simulate output").at("step_time_interval_s");
  const std::string runs = dir.file("runs.json");
  std::ofstream(runs) << R"([{"id": "mycluster_run1", "job": )" << job_json
                      << R"(, "reference": {"step_time_s": 1e6}}])";
  const CommandResult r = run_parplan("validate --published " + q(runs) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json out = parse_json(r.output, "validate output");
  const Json& run = out.at("runs").at(0);
  ASSERT_EQ(run.at("step_time_interval_s").size(), 2u) << run.dump();
  EXPECT_DOUBLE_EQ(run.at("step_time_interval_s")[0].get<double>(), expected[0].get<double>());
  EXPECT_DOUBLE_EQ(run.at("step_time_interval_s")[1].get<double>(), expected[1].get<double>());
  EXPECT_TRUE(run.at("interval_left_out_family").is_null());
  EXPECT_FALSE(run.at("inside_step_time_interval").get<bool>());  // 1e6 s lies far above
  const Json& coverage = out.at("step_time_interval_coverage");
  EXPECT_EQ(coverage.at("runs").get<int>(), 1);
  EXPECT_EQ(coverage.at("inside").get<int>(), 0);
  EXPECT_EQ(coverage.at("runs_with_own_family_left_out").get<int>(), 0);

  const CommandResult text = run_parplan("validate --published " + q(runs));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("80% step-time intervals: 0 of 1 measured times inside"),
            std::string::npos)
      << text.output;
}

}  // namespace
}  // namespace parplan::testing
