// Unit tests of the report library: SVG helpers, ranking and the Pareto front, merged
// duplicates, the "why" sentences and notes, plan files, and the shape of every writer's
// output (CSV columns, HTML without scripts or external resources).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/units.h"
#include "tests/tools/test_support.h"
#include "tools/report/charts.h"
#include "tools/report/plan_sources.h"
#include "tools/report/report_writers.h"
#include "tools/report/svg.h"
#include "tools/report/why.h"

namespace parplan::testing {
namespace {

using tools::ReportData;
using tools::ReportPlan;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(Svg, NiceTicksCoverTheRangeInRoundSteps) {
  for (auto [lo, hi] : std::vector<std::pair<double, double>>{
           {0, 13.87}, {73.2, 91.0}, {0.001, 0.0042}, {13.4, 14.0}, {0, 1e6}}) {
    const auto ticks = tools::svg::nice_ticks(lo, hi, 5);
    ASSERT_GE(ticks.size(), 2u) << lo << ".." << hi;
    EXPECT_GE(ticks.front(), lo - 1e-12);
    EXPECT_LE(ticks.back(), hi + 1e-9);
    const double step = ticks[1] - ticks[0];
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
    EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-6 || std::fabs(mantissa - 2) < 1e-6 ||
                std::fabs(mantissa - 5) < 1e-6)
        << "step " << step;
    EXPECT_LE(ticks.size(), 11u);
  }
  EXPECT_EQ(tools::svg::tick_label(0.5, 0.5), "0.5");
  EXPECT_EQ(tools::svg::tick_label(10, 5), "10");
  EXPECT_EQ(tools::svg::tick_label(0.002, 0.001), "0.002");
}

TEST(Svg, EscapesAndClipsText) {
  EXPECT_EQ(tools::svg::escape("<a & 'b' \"c\">"), "&lt;a &amp; &#39;b&#39; &quot;c&quot;&gt;");
  EXPECT_EQ(tools::svg::clip_text("short", 10), "short");
  EXPECT_EQ(tools::svg::clip_text("abcdefghijkl", 6), "abcde…");
  // Never cuts inside a UTF-8 character.
  const std::string clipped = tools::svg::clip_text("ab×cdefgh", 4);
  EXPECT_EQ(clipped, "ab…");
  EXPECT_EQ(tools::svg::num(12.5), "12.5");
  EXPECT_EQ(tools::svg::num(3.0), "3");
  EXPECT_EQ(tools::svg::text_color_on("#1f4e8c"), "#fff");
  EXPECT_EQ(tools::svg::text_color_on("#f7c68f"), "#000");
}

TEST(Report, RanksFittingPlansFirstByStepTime) {
  const ReportData data = fixed_report();
  ASSERT_EQ(data.plans.size(), 5u);
  EXPECT_EQ(data.winner().label, "file plan_zero3.json");
  bool seen_unfit = false;
  double last_time = 0;
  for (std::size_t r = 0; r < data.by_rank.size(); ++r) {
    const ReportPlan& plan = data.plans[data.by_rank[r]];
    EXPECT_EQ(plan.rank, static_cast<int>(r + 1));
    if (!plan.estimate.memory.fits) {
      seen_unfit = true;
      continue;
    }
    EXPECT_FALSE(seen_unfit) << "a plan that fits ranks after one that does not";
    EXPECT_GE(plan.estimate.step_time_s, last_time);
    last_time = plan.estimate.step_time_s;
  }
  EXPECT_TRUE(seen_unfit);
  EXPECT_EQ(data.plans[data.by_rank.back()].label, "file plan_no_fit.json");
}

TEST(Report, ParetoFrontIsUndominatedAndSortedByMemory) {
  const ReportData data = fixed_report();
  ASSERT_FALSE(data.pareto.empty());
  for (std::size_t k = 0; k < data.pareto.size(); ++k) {
    const auto& front = data.plans[data.pareto[k]];
    EXPECT_TRUE(front.on_pareto_front);
    EXPECT_TRUE(front.estimate.memory.fits);
    if (k > 0) {
      const auto& prev = data.plans[data.pareto[k - 1]].estimate;
      EXPECT_GT(front.estimate.memory.peak_bytes, prev.memory.peak_bytes);
      EXPECT_LT(front.estimate.step_time_s, prev.step_time_s);
    }
    for (const auto& other : data.plans) {
      if (!other.estimate.memory.fits) continue;
      const bool dominates = other.estimate.step_time_s < front.estimate.step_time_s &&
                             other.estimate.memory.peak_bytes < front.estimate.memory.peak_bytes;
      EXPECT_FALSE(dominates) << other.label << " dominates " << front.label;
    }
  }
  // Every fitting plan off the front is dominated (or tied) by a front member.
  for (const auto& plan : data.plans) {
    if (!plan.estimate.memory.fits || plan.on_pareto_front) continue;
    const bool dominated = std::any_of(data.pareto.begin(), data.pareto.end(), [&](auto i) {
      const auto& f = data.plans[i].estimate;
      return f.step_time_s <= plan.estimate.step_time_s &&
             f.memory.peak_bytes <= plan.estimate.memory.peak_bytes;
    });
    EXPECT_TRUE(dominated) << plan.label;
  }
}

TEST(Report, MergesIdenticalPlansAndRefusesNone) {
  const Job job = tools::load_job_for_comparison(report_data("job.json"));
  std::vector<ReportPlan> plans = {tools::make_report_plan(job, "first", "job"),
                                   tools::make_report_plan(job, "second", "file")};
  const ReportData data = tools::build_report(job, plans);
  ASSERT_EQ(data.plans.size(), 1u);
  EXPECT_EQ(data.plans[0].label, "first = second");
  EXPECT_THROW(tools::build_report(job, {}), Error);
}

TEST(Report, WhyNamesTheDifferencesAndTheKeysBehindThem) {
  const ReportData data = fixed_report();
  ASSERT_GE(data.why.size(), 3u);  // headline, runner-up, the job's own plan
  EXPECT_NE(data.why[0].find("#1 file plan_zero3.json"), std::string::npos) << data.why[0];
  EXPECT_NE(data.why[0].find("fastest plan that fits"), std::string::npos);
  // Runner-up: the vpp plan; ZeRO-3 costs fsdp_comm and saves tensor-parallel time.
  EXPECT_NE(data.why[1].find("faster than #2 file plan_vpp.json"), std::string::npos)
      << data.why[1];
  EXPECT_NE(data.why[1].find("more fsdp_comm (zero_stage 3 vs 1"), std::string::npos)
      << data.why[1];
  EXPECT_NE(data.why[1].find("less tp_comm (tp 1 vs 2"), std::string::npos) << data.why[1];
  // The job's own plan is compared too, bubble included.
  const std::string& job_line = data.why[2];
  EXPECT_NE(job_line.find("job plan"), std::string::npos) << job_line;
  EXPECT_NE(job_line.find("less pipeline_bubble (pp 1 vs 2"), std::string::npos) << job_line;
}

TEST(Report, CompareSentenceOfATie) {
  const ReportData data = fixed_report();
  const ReportPlan& a = data.winner();
  const std::string tie = tools::compare_plans(a, a);
  EXPECT_NE(tie.find("practically a tie"), std::string::npos) << tie;
}

TEST(Report, NotesListPlansThatDoNotFit) {
  const ReportData data = fixed_report();
  // The caveat, then the winner's intervals and extrapolations (the next test).
  ASSERT_EQ(data.notes.size(), 3u);
  EXPECT_NE(data.notes[0].find("1 of 5 plans do not fit"), std::string::npos) << data.notes[0];
  EXPECT_NE(data.notes[0].find("plan_no_fit.json"), std::string::npos);
}

TEST(Report, NotesStateTheWinnersIntervalsAndExtrapolations) {
  const ReportData data = fixed_report();
  ASSERT_EQ(data.notes.size(), 3u);
  EXPECT_EQ(data.notes[1].rfind("80% interval of the winner: step ", 0), 0u) << data.notes[1];
  EXPECT_NE(data.notes[1].find("validation runs: "), std::string::npos) << data.notes[1];
  EXPECT_NE(data.notes[1].find("peak memory "), std::string::npos) << data.notes[1];
  EXPECT_EQ(data.notes[2].rfind("The prediction of the winner ", 0), 0u) << data.notes[2];
}

TEST(Report, TrainingMethodsSideBySideSayWhenTheModelDoesNotTellThemApart) {
  const Job job = tools::load_job_for_comparison(report_data("job.json"));
  tools::PlanSources sources;
  sources.methods = {TrainingMethod::Sft, TrainingMethod::Lora};
  const ReportData data = tools::build_report(job, tools::collect_plans(job, sources));
  ASSERT_EQ(data.plans.size(), 2u);
  EXPECT_EQ(data.plans[0].label, "sft: job plan");
  EXPECT_EQ(data.plans[1].label, "lora: job plan");
  EXPECT_EQ(data.plans[1].job.training.method, TrainingMethod::Lora);
  // Whatever the cost model says, the report must be consistent with it: identical numbers
  // are called identical, different ones are not.
  const bool identical =
      data.plans[0].estimate.step_time_s == data.plans[1].estimate.step_time_s &&
      data.plans[0].estimate.memory.peak_bytes == data.plans[1].estimate.memory.peak_bytes;
  const bool noted = std::any_of(data.notes.begin(), data.notes.end(), [](const auto& n) {
    return n.find("identical estimates") != std::string::npos;
  });
  EXPECT_EQ(identical, noted);
  EXPECT_NE(data.why.back().find("Best plan per training method"), std::string::npos);
}

TEST(PlanFiles, ObjectOrJobFileWithDefaultsAndChecks) {
  const Job job = tools::load_job_for_comparison(report_data("job.json"));
  const ParallelPlan vpp = tools::load_plan_file(report_data("plan_vpp.json"), job);
  EXPECT_EQ(vpp.vpp, 4);
  EXPECT_EQ(vpp.dp, 4);                // derived from the 16 GPUs
  EXPECT_TRUE(vpp.sequence_parallel);  // megatron-core default with tp > 1
  EXPECT_EQ(vpp.zero_stage, 1);        // megatron-core default
  EXPECT_EQ(vpp.schedule, ScheduleKind::Interleaved);
  const ParallelPlan zb = tools::load_plan_file(report_data("job_zero_bubble.json"), job);
  EXPECT_EQ(zb.pp, 4);
  EXPECT_EQ(zb.schedule, ScheduleKind::ZeroBubble);
  try {
    tools::load_plan_file(report_data("plan_bad_key.json"), job);
    FAIL() << "an unknown key was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("plan_bad_key.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pipeline"), std::string::npos) << e.what();
  }
  // A plan the job cannot run (expert parallelism for a dense model) names the plan file.
  TempDir dir;
  write_file_atomically(dir.file("p.json"), R"({"ep": 2})");
  try {
    tools::load_plan_file(dir.file("p.json"), job);
    FAIL() << "an impossible plan was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("plan.ep"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tools::parse_training_method("qlora"), InputError);
}

TEST(Report, WinnerTimelineHasEveryActionOfEveryStage) {
  const Job job = tools::load_job_for_comparison(report_data("job.json"));
  const ReportData data = tools::build_report(job, {tools::make_report_plan(job, "job", "job")});
  const auto& pipe = data.winner_detail.pipeline;
  // 1F1B: one forward and one backward per micro-batch on each of the pp stages.
  EXPECT_EQ(pipe.events.size(),
            static_cast<std::size_t>(2 * job.plan.pp * data.winner().estimate.num_micro_batches));
  EXPECT_NEAR(data.winner_detail.step_time_s, data.winner().estimate.step_time_s,
              1e-9 * data.winner().estimate.step_time_s);
}

TEST(Writers, CsvHasOneRowPerPlanAndUnitsInTheHeader) {
  const ReportData data = fixed_report();
  const std::string csv = tools::report_to_csv(data);
  std::vector<std::string> lines;
  for (std::size_t start = 0, end; (end = csv.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(csv.substr(start, end - start));
  }
  ASSERT_EQ(lines.size(), data.plans.size() + 1);
  const std::size_t columns = count(lines[0], ",") + 1;
  for (const auto& line : lines) EXPECT_EQ(count(line, ",") + 1, columns) << line;
  for (const char* name : {"step_time_s", "peak_memory_gib", "tokens_per_s_per_gpu", "mfu_fraction",
                           "pipeline_bubble_s", "capacity_gib"}) {
    EXPECT_NE(lines[0].find(name), std::string::npos) << name;
  }
}

TEST(Writers, HtmlIsSelfContainedWithOneSvgPerChart) {
  const std::string html = tools::report_to_html(fixed_report());
  EXPECT_EQ(count(html, "<svg"), static_cast<std::size_t>(tools::kNumCharts));
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "src="), 0u);
  EXPECT_EQ(count(html, "href="), 0u);
  EXPECT_EQ(count(html, "url("), 0u);
  EXPECT_EQ(count(html, "@import"), 0u);
  EXPECT_NE(html.find("@media print"), std::string::npos);
  // Every "http" is the SVG namespace, never a resource.
  EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_NE(html.find("Why #1 file plan_zero3.json wins"), std::string::npos);
}

TEST(Writers, JsonCarriesEveryPlanKeyBreakdownAndStageMemory) {
  const ReportData data = fixed_report();
  const Json json = tools::report_to_json(data);
  ASSERT_EQ(json.at("plans").size(), data.plans.size());
  for (const auto& plan : json.at("plans")) {
    for (const char* key : {"tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch_size",
                            "sequence_parallel", "recompute", "zero_stage", "schedule"}) {
      EXPECT_TRUE(plan.at("plan").contains(key)) << key;
    }
    double sum = 0;
    for (const auto& [name, seconds] : plan.at("breakdown").items()) sum += seconds.get<double>();
    EXPECT_NEAR(sum, plan.at("step_time_s").get<double>(), 1e-9 * sum);
    EXPECT_EQ(plan.at("memory").at("stages").size(), plan.at("plan").at("pp").get<std::size_t>());
  }
  EXPECT_EQ(json.at("winner"), data.winner().label);
  EXPECT_EQ(json.at("why").size(), data.why.size());
}

}  // namespace
}  // namespace parplan::testing
