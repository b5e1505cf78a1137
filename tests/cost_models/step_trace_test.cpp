#include "cost_models/step_trace.h"

#include <gtest/gtest.h>

#include <set>

namespace parplan::cost {
namespace {

TEST(StepTrace, OneEventPerPipelineActionOnStageTracks) {
  const Job job = parse_job(parse_json(R"({"model": "llama3.1-8b",
      "cluster": {"node": "dgx-h100", "num_nodes": 2},
      "training": {"global_batch_size": 32, "seq_length": 4096},
      "plan": {"tp": 2, "pp": 4, "dp": 2, "micro_batch_size": 1}})",
                                       "job.json"),
                            "job.json", "");
  StepOptions options;
  options.record_pipeline_events = true;
  const StepEstimate e = estimate_step(job, options);
  const auto events = step_trace_events(job, e);
  std::set<std::string> tracks;
  int64_t stage_events = 0;
  for (const auto& ev : events) {
    tracks.insert(ev.track);
    EXPECT_GE(ev.start_s, 0.0);
    EXPECT_GE(ev.duration_s, 0.0);
    EXPECT_LE(ev.start_s + ev.duration_s, e.step_time_s * (1 + 1e-9) + e.p2p_s);
    if (ev.track.rfind("stage ", 0) == 0 && ev.track.find("comm") == std::string::npos &&
        ev.category != "optimizer") {
      ++stage_events;
    }
  }
  EXPECT_EQ(stage_events, static_cast<int64_t>(e.pipeline.events.size()));
  EXPECT_EQ(stage_events, 4 * 2 * e.num_micro_batches);  // forward + backward per stage
  for (int s = 0; s < 4; ++s) {
    EXPECT_TRUE(tracks.count("stage " + std::to_string(s)));
    EXPECT_TRUE(tracks.count("stage " + std::to_string(s) + " comm"));
  }
  // The JSON has the Trace Event Format's complete events.
  const Json trace = chrome_trace_json(events);
  ASSERT_TRUE(trace.contains("traceEvents"));
  int complete = 0;
  for (const auto& ev : trace["traceEvents"]) complete += ev["ph"] == "X" ? 1 : 0;
  EXPECT_EQ(complete, static_cast<int>(events.size()));
}

}  // namespace
}  // namespace parplan::cost
