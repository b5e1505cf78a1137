#include "core/chrome_trace.h"

#include <map>
#include <utility>

#include "core/atomic_file.h"
#include "core/units.h"

namespace parplan {

Json chrome_trace_json(const std::vector<TraceEvent>& events) {
  std::map<std::string, int> pids;
  std::map<std::pair<int, std::string>, int> tids;
  std::map<int, int> tracks_in_process;
  Json meta = Json::array();
  Json body = Json::array();
  for (const auto& e : events) {
    auto [pit, new_process] = pids.try_emplace(e.process, static_cast<int>(pids.size()) + 1);
    const int pid = pit->second;
    if (new_process) {
      meta.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"name", e.process}}}});
      meta.push_back({{"name", "process_sort_index"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", 0},
                      {"args", {{"sort_index", pid}}}});
    }
    int& tid = tids[{pid, e.track}];
    if (tid == 0) {
      tid = ++tracks_in_process[pid];
      meta.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"name", e.track}}}});
      meta.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
    }
    Json event = {{"name", e.name},
                  {"cat", e.category},
                  {"ph", "X"},
                  {"pid", pid},
                  {"tid", tid},
                  {"ts", e.start_s * kUsPerS},
                  {"dur", e.duration_s * kUsPerS}};
    if (!e.args.empty()) event["args"] = e.args;
    body.push_back(std::move(event));
  }
  for (auto& e : body) meta.push_back(std::move(e));
  return {{"traceEvents", std::move(meta)}, {"displayTimeUnit", "ms"}};
}

void write_chrome_trace(const std::string& path, const std::vector<TraceEvent>& events) {
  write_file_atomically(path, chrome_trace_json(events).dump() + "\n");
}

Json trace_event_to_json(const TraceEvent& e) {
  return {{"n", e.name},    {"c", e.category},   {"t", e.track}, {"p", e.process},
          {"s", e.start_s}, {"d", e.duration_s}, {"a", e.args}};
}

TraceEvent trace_event_from_json(const Json& v) {
  TraceEvent e;
  e.name = v.at("n").get<std::string>();
  e.category = v.at("c").get<std::string>();
  e.track = v.at("t").get<std::string>();
  e.process = v.at("p").get<std::string>();
  e.start_s = v.at("s").get<double>();
  e.duration_s = v.at("d").get<double>();
  e.args = v.at("a");
  return e;
}

}  // namespace parplan
