// Chrome trace files (the JSON "Trace Event Format" that Perfetto and chrome://tracing read):
// complete events ("ph": "X") on named tracks, grouped into named processes. The executor
// writes the trace of a real run and the simulator the trace of a predicted one, in this one
// format, so the two can be laid side by side. Tested in tests/core/chrome_trace_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/json_input.h"

namespace parplan {

struct TraceEvent {
  std::string name;      // e.g. "F mb3 c0", "all_reduce"
  std::string category;  // a breakdown phase: "compute", "tp_comm", "pipeline_bubble", ...
  std::string track;     // thread row, e.g. "stage 1", "tp comm"
  double start_s = 0;    // from the start of the trace
  double duration_s = 0;
  Json args = Json::object();
  std::string process = "parplan";  // process row group, e.g. "rank 3 (pp 1, tp 1, dp 0)"
};

// The trace as one JSON object: {"traceEvents": [...], "displayTimeUnit": "ms"}. Processes
// and tracks get pid/tid in order of first appearance, with process_name/thread_name (and
// sort index) metadata events; times are in microseconds as the format asks.
Json chrome_trace_json(const std::vector<TraceEvent>& events);

// Writes chrome_trace_json(events) to `path` atomically (core/atomic_file.h).
void write_chrome_trace(const std::string& path, const std::vector<TraceEvent>& events);

// TraceEvent <-> compact JSON, for moving events between processes.
Json trace_event_to_json(const TraceEvent& event);
TraceEvent trace_event_from_json(const Json& value);

}  // namespace parplan
