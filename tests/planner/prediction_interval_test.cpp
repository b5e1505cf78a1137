// The validation error model (planner/error_model.h), its prediction intervals
// (planner/prediction_interval.h) and extrapolations (planner/extrapolation.h): on small
// synthetic models whose order statistics and extrapolations are known, and the honesty check
// (leave one source family out) on the embedded model built from the public validation runs.
#include "planner/prediction_interval.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/check.h"
#include "planner/error_model.h"
#include "planner/extrapolation.h"

namespace parplan::planner {
namespace {

RunFeatures features(const std::string& family, const std::string& architecture, int64_t gpus,
                     bool moe = false) {
  RunFeatures f;
  f.framework = family == "megatron" ? "megatron-core" : family;
  f.family = family;
  f.gpu = architecture == "hopper" ? "H100" : "A100";
  f.architecture = architecture;
  f.gpus = gpus;
  f.moe = moe;
  if (moe) f.features = {"moe", "ep"};
  f.plan = {{"tp", "8"}, {"pp", moe ? "2" : "4"}};
  return f;
}

// `count` runs of one family and class with residuals 0.01, 0.02, ... (times `scale`).
void add_runs(ErrorModel& model, const std::string& source_family, const RunFeatures& f, int count,
              double scale = 0.01) {
  for (int i = 1; i <= count; ++i) {
    ErrorModelRun run;
    run.id = source_family + "_" + std::to_string(model.runs.size());
    run.source_family = source_family;
    run.features = f;
    run.step_time_log_residual = scale * i;
    run.memory_log_residual = -scale * i;
    model.runs.push_back(run);
  }
}

TEST(PredictionInterval, BoundsAreTheConformalOrderStatistics) {
  ErrorModel model;
  add_runs(model, "a", features("megatron", "hopper", 64), 19);
  const auto iv = step_time_interval(model, features("megatron", "hopper", 64), 10.0);
  ASSERT_TRUE(iv.has_value());
  EXPECT_EQ(iv->runs, 19);
  // n = 19: ranks floor(20 * 0.1) = 2 and ceil(20 * 0.9) = 18 of 0.01 ... 0.19.
  EXPECT_NEAR(iv->low, 10.0 * std::exp(-0.18), 1e-12);
  EXPECT_NEAR(iv->high, 10.0 * std::exp(-0.02), 1e-12);
  EXPECT_EQ(iv->basis, "megatron, hopper, dense, no fsdp/zero3, no cp, <= 64 GPUs");
}

TEST(PredictionInterval, SmallClassesBackOffToCoarserOnes) {
  ErrorModel model;
  add_runs(model, "a", features("megatron", "hopper", 64), 5, 0.01);
  add_runs(model, "b", features("megatron", "hopper", 2048), 5, 0.10);
  // Five runs at each scale: the class without scale holds ten.
  const auto iv = step_time_interval(model, features("megatron", "hopper", 64), 1.0);
  ASSERT_TRUE(iv.has_value());
  EXPECT_EQ(iv->runs, 10);
  EXPECT_EQ(iv->basis, "megatron, hopper, dense, no fsdp/zero3, no cp");
  // Fewer than kMinClassRuns runs in all: no interval.
  ErrorModel tiny;
  add_runs(tiny, "a", features("megatron", "hopper", 64), kMinClassRuns - 1);
  EXPECT_FALSE(step_time_interval(tiny, features("megatron", "hopper", 64), 1.0).has_value());
  // Leaving family b out leaves five runs: no interval either.
  EXPECT_FALSE(step_time_interval(model, features("megatron", "hopper", 64), 1.0, "b"));
}

TEST(PredictionInterval, AWiderSpreadGivesAWiderInterval) {
  ErrorModel narrow, wide;
  add_runs(narrow, "a", features("megatron", "hopper", 64), 20, 0.005);
  add_runs(wide, "a", features("megatron", "hopper", 64), 20, 0.02);
  const auto n = step_time_interval(narrow, features("megatron", "hopper", 64), 1.0);
  const auto w = step_time_interval(wide, features("megatron", "hopper", 64), 1.0);
  ASSERT_TRUE(n && w);
  EXPECT_LT(n->high - n->low, w->high - w->low);
}

TEST(PredictionInterval, MemoryHeadroomIsTheLowOrderStatistic) {
  ErrorModel model;
  add_runs(model, "a", features("megatron", "hopper", 64), 19);
  // Memory residuals -0.01 ... -0.19: rank floor(20 * 0.1) = 2 from the bottom is -0.18.
  EXPECT_NEAR(default_max_memory_fraction(model), std::exp(-0.18), 1e-12);
  ErrorModel over;  // a model that only over-predicts memory needs no headroom
  add_runs(over, "a", features("megatron", "hopper", 64), 19, -0.01);
  EXPECT_EQ(default_max_memory_fraction(over), 1.0);
  EXPECT_EQ(default_max_memory_fraction(ErrorModel{}), 1.0);
}

TEST(PredictionInterval, LeaveOneFamilyOutUsesOnlyOtherFamilies) {
  ErrorModel model;
  add_runs(model, "a", features("megatron", "hopper", 64), 10, 0.01);
  add_runs(model, "b", features("megatron", "hopper", 64), 10, 0.01);
  const CoverageCheck same = leave_one_family_out(model, false);
  EXPECT_EQ(same.runs, 20);
  EXPECT_EQ(same.families, 2);
  // Identical families: the order statistics 1 and 10 of ten bound every run.
  EXPECT_EQ(same.coverage, 1.0);
  ErrorModel shifted;
  add_runs(shifted, "a", features("megatron", "hopper", 64), 10, 0.01);
  add_runs(shifted, "b", features("megatron", "hopper", 64), 10, 0.20);
  // Family b's residuals 0.2 ... 2.0 against a's 0.01 ... 0.1: no run inside the other's.
  EXPECT_EQ(leave_one_family_out(shifted, false).coverage, 0.0);
  // Counting only family a's runs: their intervals still come from family b's.
  const auto only_a = [](const ErrorModelRun& run) { return run.source_family == "a"; };
  const CoverageCheck a = leave_one_family_out(shifted, false, only_a);
  EXPECT_EQ(a.runs, 10);
  EXPECT_EQ(a.families, 1);
  EXPECT_EQ(a.coverage, 0.0);
  // a's intervals come from b's widely spread residuals, b's from a's narrow ones.
  const auto only_b = [](const ErrorModelRun& run) { return run.source_family == "b"; };
  EXPECT_GT(a.median_half_width, leave_one_family_out(shifted, false, only_b).median_half_width);
}

TEST(PredictionInterval, ErrorModelJsonRoundTrips) {
  ErrorModel model;
  model.sources = {"runs.json"};
  add_runs(model, "a", features("megatron", "hopper", 64, true), 3);
  model.runs[1].memory_log_residual.reset();
  const ErrorModel back = error_model_from_json(error_model_to_json(model), "model.json");
  EXPECT_EQ(error_model_to_json(back), error_model_to_json(model));
  Json broken = error_model_to_json(model);
  broken["runs"][2].erase("features");
  try {
    error_model_from_json(broken, "model.json");
    FAIL() << "a run without features was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.json: runs[2]"), std::string::npos) << e.what();
  }
}

bool has_kind(const std::vector<Extrapolation>& list, const std::string& kind) {
  for (const auto& x : list) {
    if (x.kind == kind) return true;
  }
  return false;
}

TEST(Extrapolation, NamesEveryWayOutsideTheValidationRuns) {
  ErrorModel model;  // 10 runs with measured peaks: enough for the family's memory class
  add_runs(model, "a", features("megatron", "hopper", 1024), 5);
  add_runs(model, "b", features("megatron", "hopper", 256, true), 5);
  EXPECT_TRUE(find_extrapolations(model, features("megatron", "hopper", 512)).empty());
  EXPECT_TRUE(has_kind(find_extrapolations(model, features("megatron", "ampere", 512)), "gpu"));
  EXPECT_TRUE(has_kind(find_extrapolations(model, features("megatron", "hopper", 2048)), "scale"));
  const auto other = find_extrapolations(model, features("torchtitan", "hopper", 512));
  EXPECT_TRUE(has_kind(other, "framework"));
  RunFeatures fp8 = features("megatron", "hopper", 512);
  fp8.features = {"fp8"};
  EXPECT_TRUE(has_kind(find_extrapolations(model, fp8), "feature"));
  RunFeatures moe_cp = features("megatron", "hopper", 512, true);
  moe_cp.features.push_back("cp");
  EXPECT_TRUE(has_kind(find_extrapolations(model, moe_cp), "feature"));
  RunFeatures tp16 = features("megatron", "hopper", 512);
  tp16.plan["tp"] = "16";
  const auto keys = find_extrapolations(model, tp16);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].kind, "plan-key");
  EXPECT_NE(keys[0].message.find("tp 16"), std::string::npos) << keys[0].message;
  EXPECT_NE(keys[0].message.find("validated: 8"), std::string::npos) << keys[0].message;
}

TEST(Extrapolation, AFamilyWithoutMeasuredPeaksExtrapolatesItsMemory) {
  // Megatron's runs measured step times only: a Megatron job's memory interval comes from
  // the torchtitan runs' peaks, which the job must be told.
  ErrorModel model;
  add_runs(model, "a", features("megatron", "hopper", 256), 3);
  add_runs(model, "b", features("torchtitan", "hopper", 256), kMinClassRuns);
  for (auto& run : model.runs) {
    if (run.features.family == "megatron") run.memory_log_residual.reset();
  }
  const auto megatron = find_extrapolations(model, features("megatron", "hopper", 256));
  ASSERT_EQ(megatron.size(), 1u);
  EXPECT_EQ(megatron[0].kind, "memory");
  EXPECT_NE(megatron[0].message.find("megatron framework family"), std::string::npos);
  EXPECT_TRUE(find_extrapolations(model, features("torchtitan", "hopper", 256)).empty());
  // A family with fewer measured peaks than a class needs borrows other frameworks' too.
  model.runs.pop_back();
  const auto few = find_extrapolations(model, features("torchtitan", "hopper", 256));
  ASSERT_EQ(few.size(), 1u);
  EXPECT_EQ(few[0].kind, "memory");
  EXPECT_NE(few[0].message.find("8 validation runs"), std::string::npos) << few[0].message;
}

TEST(Extrapolation, FeaturesSeenApartButNeverTogether) {
  ErrorModel model;
  RunFeatures cp = features("megatron", "hopper", 64);
  cp.features = {"cp"};
  RunFeatures fp8 = features("megatron", "hopper", 64);
  fp8.features = {"fp8"};
  add_runs(model, "a", cp, 5);
  add_runs(model, "b", fp8, 5);
  RunFeatures both = features("megatron", "hopper", 64);
  both.features = {"cp", "fp8"};
  const auto list = find_extrapolations(model, both);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].kind, "feature-combination");
}

// The honesty test on the public validation runs (docs/intervals.md): each source family's
// runs get intervals from the other families' runs only. Gated at what the model achieves
// (measured coverage and median half-width: planner/data/error_model.json,
// "leave_one_family_out"); the target is 70-95% coverage and at most 12% half-width.
TEST(PredictionInterval, HonestOnUnseenSourceFamilies) {
  const ErrorModel& model = embedded_error_model();
  ASSERT_GE(model.runs.size(), 200u) << "the embedded error model lost runs";
  const CoverageCheck check = leave_one_family_out(model, false);
  EXPECT_EQ(check.runs, static_cast<int>(model.runs.size()));
  EXPECT_GE(check.coverage, 0.70);
  EXPECT_LE(check.coverage, 0.95);
  // 0.132 over 213 runs; 0.171 with Megatron-Bridge's seven archive tables (168 runs whose
  // MoE rows vary 2x between releases: their own intervals are wide), which narrowed the
  // intervals of the 208 runs in no archive table from 0.132 to 0.125 (docs/intervals.md);
  // 0.151 once NCCL's LL bandwidth cap and LL128 joined the ring model (DeepSpeed ZeRO-3).
  EXPECT_LE(check.median_half_width, 0.155);
  // The memory headroom is a fraction of the GPU that leaves room for under-prediction.
  EXPECT_GT(recommended_max_memory_fraction(), 0.5);
  EXPECT_LE(recommended_max_memory_fraction(), 1.0);
}

}  // namespace
}  // namespace parplan::planner
