#include "core/chrome_trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>

namespace parplan {
namespace {

std::vector<TraceEvent> sample_events() {
  std::vector<TraceEvent> events(3);
  events[0] = {"F mb0", "compute", "stage 0", 0.001, 0.002, Json::object(), "rank 0"};
  events[1] = {"all_reduce", "tp_comm", "tp comm", 0.0025, 0.0005, {{"bytes", 64}}, "rank 0"};
  events[2] = {"F mb0", "compute", "stage 1", 0.004, 0.002, Json::object(), "rank 1"};
  return events;
}

TEST(ChromeTrace, CompleteEventsWithProcessAndThreadNames) {
  const Json trace = chrome_trace_json(sample_events());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  int complete = 0;
  std::map<std::string, int> process_pids;
  std::map<std::pair<int, int>, std::string> thread_names;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_pids[e["args"]["name"]] = e["pid"];
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      thread_names[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
    }
    if (e["ph"] == "X") ++complete;
  }
  EXPECT_EQ(complete, 3);
  ASSERT_EQ(process_pids.size(), 2u);
  EXPECT_NE(process_pids["rank 0"], process_pids["rank 1"]);
  const int p0 = process_pids["rank 0"];
  EXPECT_EQ((thread_names[{p0, 1}]), "stage 0");
  EXPECT_EQ((thread_names[{p0, 2}]), "tp comm");
  // Times are microseconds.
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "tp_comm") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2500.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 500.0);
      EXPECT_EQ(e["args"]["bytes"], 64);
      EXPECT_EQ(e["pid"], p0);
      EXPECT_EQ(e["tid"], 2);
    }
  }
}

TEST(ChromeTrace, EventJsonRoundTrip) {
  for (const auto& e : sample_events()) {
    const TraceEvent back = trace_event_from_json(trace_event_to_json(e));
    EXPECT_EQ(back.name, e.name);
    EXPECT_EQ(back.category, e.category);
    EXPECT_EQ(back.track, e.track);
    EXPECT_EQ(back.process, e.process);
    EXPECT_DOUBLE_EQ(back.start_s, e.start_s);
    EXPECT_DOUBLE_EQ(back.duration_s, e.duration_s);
    EXPECT_EQ(back.args, e.args);
  }
}

TEST(ChromeTrace, WritesParsableFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "parplan_chrome_trace_test.json").string();
  write_chrome_trace(path, sample_events());
  const Json back = load_json_file(path);
  EXPECT_EQ(back["traceEvents"].size(), chrome_trace_json(sample_events())["traceEvents"].size());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace parplan
