// Issue 20's dead ends, near-copies and cluster shapes, end to end: `plan` explaining why no
// plan fits and what would (exit 3), --fix pins that cannot fill the cluster (exit 1) or are
// given twice (exit 2), distinct plans in `plan` and `compare` (--all-variants for all),
// `compare`'s --fix and --max-memory-fraction, partial nodes and NVL72 layouts, and the
// training method named as the cause of a cross-method gap.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "core/json_input.h"
#include "tests/tools/test_support.h"

namespace parplan::testing {
namespace {

std::string q(const std::string& path) { return "'" + path + "'"; }

// A job file in `dir`: the model preset, the cluster object's JSON and the batch.
std::string write_job(const TempDir& dir, const std::string& model, const std::string& cluster,
                      int gbs, int seq) {
  const std::string path = dir.file("job.json");
  std::ofstream(path) << R"({"model": ")" << model << R"(", "cluster": )" << cluster
                      << R"(, "training": {"global_batch_size": )" << gbs << R"(, "seq_length": )"
                      << seq << "}}";
  return path;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The keys planner/plan_groups.h groups by, from a plan's JSON.
std::string layout_of(const Json& plan) {
  std::string key;
  for (const char* k :
       {"tp", "cp", "pp", "dp", "ep", "micro_batch_size", "sequence_parallel", "recompute"}) {
    key += plan.at(k).dump() + " ";
  }
  return key + (plan.at("zero_stage").get<int>() >= 3 ? "z3" : "z<3");
}

TEST(PlanDeadEnd, TooBigAModelSaysWhatItNeedsAndWhereItFits) {
  TempDir dir;
  const std::string job =
      write_job(dir, "llama3.1-405b", R"({"node": "dgx-h100", "num_nodes": 1})", 64, 8192);
  const CommandResult r = run_parplan("plan --job " + q(job) + " --threads 2");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "no plan fits: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "none within the memory of a GPU")) << r.output;
  EXPECT_TRUE(contains(r.output, "least memory any plan needs: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "closest plan: tp")) << r.output;
  EXPECT_TRUE(contains(r.output, "smallest cluster that fits: ")) << r.output;
  EXPECT_TRUE(contains(r.output, " x dgx-h100 (")) << r.output;

  const CommandResult json = run_parplan("plan --job " + q(job) + " --threads 2 --json");
  EXPECT_EQ(json.exit_code, 3);
  const Json out = Json::parse(json.output);
  const Json& dead_end = out.at("no_plan");
  EXPECT_EQ(dead_end.at("why"), "out of memory");
  EXPECT_GT(dead_end.at("least_peak_gib").get<double>(), dead_end.at("capacity_gib").get<double>());
  const Json& fit = dead_end.at("smallest_fitting_cluster");
  EXPECT_GT(fit.at("num_nodes").get<int>(), 1);
  EXPECT_LE(fit.at("peak_gib").get<double>(), dead_end.at("capacity_gib").get<double>());

  // One node fewer than the smallest cluster found does not fit either.
  const int nodes = fit.at("num_nodes").get<int>();
  const std::string smaller = write_job(
      dir, "llama3.1-405b",
      R"({"node": "dgx-h100", "num_nodes": )" + std::to_string(nodes - 1) + "}", 64, 8192);
  if (nodes - 1 > 1) {
    EXPECT_EQ(run_parplan("plan --job " + q(smaller) + " --threads 2 --json").exit_code, 3);
  }
}

TEST(PlanDeadEnd, FixesThatCannotFillTheClusterAreInputErrors) {
  TempDir dir;
  const std::string job =
      write_job(dir, "llama3.1-70b", R"({"node": "dgx-h100", "num_nodes": 32})", 1024, 8192);
  const CommandResult tp3 = run_parplan("plan --job " + q(job) + " --fix tp=3");
  EXPECT_EQ(tp3.exit_code, 1) << tp3.output;
  EXPECT_TRUE(contains(tp3.output,
                       "error: --fix: tp: found 3; allowed: a divisor of the "
                       "cluster's 256 GPUs"))
      << tp3.output;
  EXPECT_FALSE(contains(tp3.output, "rejected: gpu-count")) << tp3.output;

  const CommandResult dp7 = run_parplan("plan --job " + q(job) + " --fix dp=7");
  EXPECT_EQ(dp7.exit_code, 1) << dp7.output;
  EXPECT_TRUE(contains(dp7.output, "error: --fix: dp: found 7; allowed: a divisor")) << dp7.output;

  const CommandResult product = run_parplan("plan --job " + q(job) + " --fix tp=8 --fix pp=64");
  EXPECT_EQ(product.exit_code, 1) << product.output;
  EXPECT_TRUE(contains(product.output, "tp*pp = 8*64 = 512; allowed: a product that divides"))
      << product.output;

  // Pins that divide the cluster but break a model rule name the rule, as simulate does.
  const CommandResult heads = run_parplan("plan --job " + q(job) + " --fix tp=128");
  EXPECT_EQ(heads.exit_code, 1) << heads.output;
  EXPECT_TRUE(contains(heads.output, "error: --fix: tp=128: no valid plan with these pins ("))
      << heads.output;
  EXPECT_TRUE(contains(heads.output,
                       "break heads-by-tp): plan.tp: found 128; allowed: a divisor "
                       "of model.num_attention_heads (64)"))
      << heads.output;

  const CommandResult twice = run_parplan("plan --job " + q(job) + " --fix tp=8 --fix tp=4");
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_TRUE(contains(twice.output, "error: --fix: tp: found twice (\"tp=8\" and \"tp=4\")"))
      << twice.output;
}

TEST(PlanDistinct, TopPlansAreDistinctLayoutsUnlessAllVariantsAreAsked) {
  TempDir dir;
  const std::string job =
      write_job(dir, "llama3.1-70b", R"({"node": "dgx-h100", "num_nodes": 8})", 128, 8192);
  const CommandResult r = run_parplan("plan --job " + q(job) + " --top 8 --json --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json distinct = Json::parse(r.output);
  std::set<std::string> layouts;
  int64_t folded = 0;
  for (const auto& p : distinct.at("plans")) {
    EXPECT_TRUE(layouts.insert(layout_of(p.at("plan"))).second) << p.dump();
    folded += p.at("folded_variants").get<int64_t>();
  }
  EXPECT_EQ(layouts.size(), 8u);
  EXPECT_GT(folded, 0);
  EXPECT_EQ(distinct.at("folded_variants").get<int64_t>(), folded);

  const CommandResult all =
      run_parplan("plan --job " + q(job) + " --top 8 --json --threads 2 --all-variants");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const Json every = Json::parse(all.output);
  std::set<std::string> all_layouts;
  for (const auto& p : every.at("plans")) all_layouts.insert(layout_of(p.at("plan")));
  EXPECT_LT(all_layouts.size(), 8u);  // near-copies of one layout fill the full list
  // The best plan is the same either way.
  EXPECT_EQ(every.at("plans")[0].at("plan"), distinct.at("plans")[0].at("plan"));

  const CommandResult text = run_parplan("plan --job " + q(job) + " --top 8 --threads 2");
  EXPECT_TRUE(contains(text.output, "variants folded into these plans")) << text.output;
  EXPECT_TRUE(contains(text.output, "fits: peak ")) << text.output;
}

TEST(CompareSearch, PinsMemoryFractionAndDistinctPlans) {
  TempDir dir;
  const std::string job =
      write_job(dir, "llama3.1-70b", R"({"node": "dgx-h100", "num_nodes": 8})", 128, 8192);
  const CommandResult r =
      run_parplan("compare --job " + q(job) + " --top 4 --fix tp=8 --max-memory-fraction 0.6 " +
                  "--json --out " + q(dir.file("report")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json report = Json::parse(r.output);
  std::set<std::string> layouts;
  for (const auto& p : report.at("plans")) {
    EXPECT_EQ(p.at("plan").at("tp"), 8) << p.dump();
    EXPECT_LE(p.at("peak_memory_gib").get<double>(), 0.6 * 79.6 + 0.1) << p.dump();
    EXPECT_TRUE(layouts.insert(layout_of(p.at("plan"))).second) << p.dump();
  }
  bool folded_note = false;
  for (const auto& note : report.at("notes")) {
    folded_note |= contains(note.get<std::string>(), "variants that differ from them only in");
  }
  EXPECT_TRUE(folded_note) << report.at("notes").dump();

  const CommandResult text =
      run_parplan("compare --job " + q(job) + " --top 2 --out " + q(dir.file("report2")));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "  fits: peak ")) << text.output;

  const CommandResult bad =
      run_parplan("compare --job " + q(job) + " --fix tp=3 --out " + q(dir.file("report3")));
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "error: --fix: tp: found 3")) << bad.output;
}

// Llama 3.1 8B on two H100s: the fastest plan that fits the whole GPU fills it to within a
// few %. (By default the search keeps the memory model's headroom: nothing fits here then.)
TEST(CompareSearch, ATightWinnerGetsAHeadroomNoteAndTheFractionRemovesIt) {
  TempDir dir;
  const std::string job =
      write_job(dir, "llama3.1-8b", R"({"node": "dgx-h100", "num_gpus": 2})", 12, 4096);
  const CommandResult tight = run_parplan(
      "compare --job " + q(job) + " --top 1 --max-memory-fraction 1 --out " + q(dir.file("a")));
  ASSERT_EQ(tight.exit_code, 0) << tight.output;
  EXPECT_TRUE(contains(tight.output, "note: The winner #1 search #1 uses ")) << tight.output;
  EXPECT_TRUE(contains(tight.output, "so --max-memory-fraction 0.9 keeps headroom"))
      << tight.output;
  const CommandResult roomy =
      run_parplan("compare --job " + q(job) + " --top 1 --max-memory-fraction 0.9 --json --out " +
                  q(dir.file("b")));
  ASSERT_EQ(roomy.exit_code, 0) << roomy.output;
  const Json report = Json::parse(roomy.output);
  EXPECT_LE(report.at("plans")[0].at("peak_memory_gib").get<double>(), 0.9 * 79.6);
  EXPECT_FALSE(contains(report.at("notes").dump(), "keeps headroom")) << report.at("notes").dump();
}

TEST(CompareSearch, ACrossMethodGapNamesTheMethod) {
  TempDir dir;
  const CommandResult r = run_parplan("compare --job " + q(report_data("job.json")) +
                                      " --top 0 --method pretrain,lora --out " + q(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "the training method differs (")) << r.output;
}

TEST(ClusterShape, APartialNodeIsNamedAndQuestioned) {
  TempDir dir;
  const std::string job =
      write_job(dir, "llama3.1-8b", R"({"node": "dgx-h100", "num_gpus": 100})", 100, 4096);
  const CommandResult r = run_parplan("simulate --job " + q(job));
  EXPECT_TRUE(contains(r.output, "on 12 full dgx-h100 nodes + 4 GPUs (100 GPUs)")) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: " + job +
                                     ": cluster.num_gpus: 100 GPUs are 12 full "
                                     "dgx-h100 nodes + 4 GPUs on one more node"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "give num_nodes 12 (96 GPUs) or 13 (104 GPUs)")) << r.output;
  // The plan search and the compare report name the shape too (never "13 x dgx-h100").
  const CommandResult plan = run_parplan("plan --job " + q(job) + " --top 1 --threads 2");
  EXPECT_TRUE(contains(plan.output, "llama3.1-8b on 12 full dgx-h100 nodes + 4 GPUs (100 GPUs)"))
      << plan.output;
  const CommandResult compare =
      run_parplan("compare --job " + q(job) + " --top 1 --out " + q(dir.file("report")));
  EXPECT_TRUE(
      contains(compare.output, "compared 1 plan of llama3.1-8b on 12 full dgx-h100 nodes + 4 GPUs"))
      << compare.output;
  EXPECT_FALSE(contains(plan.output + compare.output, "13 x dgx-h100"));
}

TEST(ClusterShape, Nvl72RacksOfferSixtyFourOfSeventyTwo) {
  TempDir dir;
  const std::string partial =
      write_job(dir, "llama3.1-70b", R"({"node": "gb200-nvl72", "num_gpus": 16384})", 16384, 4096);
  const CommandResult warned = run_parplan("simulate --job " + q(partial));
  EXPECT_TRUE(contains(warned.output, "227 full gb200-nvl72 nodes + 40 GPUs")) << warned.output;
  EXPECT_TRUE(contains(warned.output,
                       "or 256 nodes using 64 of their 72 GPUs each "
                       "(cluster.gpus_used_per_node 64)"))
      << warned.output;

  const std::string used = write_job(
      dir, "llama3.1-70b", R"({"node": "gb200-nvl72", "num_nodes": 256, "gpus_used_per_node": 64})",
      16384, 4096);
  const CommandResult r = run_parplan("simulate --job " + q(used));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "on 256 x gb200-nvl72 using 64 of 72 GPUs each (16384 GPUs)"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "warning:")) << r.output;
}

TEST(ClusterShape, AnAwkwardFactorThatBlocksEveryPlanIsNamed) {
  TempDir dir;
  // 224 racks of 72 = 16128 GPUs = 2^8 x 3^2 x 7: with 64 heads, 80 layers and a batch of
  // 2048, the 63 can only go to pp, and 63 stages of 80 layers are too uneven.
  const std::string job =
      write_job(dir, "llama3.1-70b", R"({"node": "gb200-nvl72", "num_nodes": 224})", 2048, 8192);
  const CommandResult r = run_parplan("plan --job " + q(job) + " --threads 2");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "is a valid plan:")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "the factor 3 of 16128 GPUs (16128 = 2^8 x 3^2 x 7) blocks "
                       "every plan: 5376 GPUs (16128 / 3) have valid plans"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "uses 64 of each node's 72 GPUs (cluster.gpus_used_per_node 64"))
      << r.output;
}

}  // namespace
}  // namespace parplan::testing
