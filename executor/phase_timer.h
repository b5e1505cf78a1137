// PhaseTimer: splits each rank's step time into the breakdown phases that `parplan simulate`
// also reports (compute, recompute, tp_comm, pp_comm, dp_comm, pipeline_bubble, optimizer,
// other). Exactly one phase is current at any time; PhaseScope switches to a phase and back,
// so the phases of a step add up to its wall time. With tracing on, each scope that carries
// a name becomes a Chrome trace event on its track (the stage's compute row, or one row per
// communication kind). On asynchronous backends the timer synchronises the device at each
// switch so that time lands in the right phase. Comm scopes arm the watchdog.
// Tested in tests/executor/measurement_test.cpp.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/chrome_trace.h"

namespace parplan::executor {

enum class Phase { Compute, Recompute, TpComm, PpComm, DpComm, PipelineBubble, Optimizer, Other };
inline constexpr int kNumPhases = 8;
const char* to_string(Phase phase);  // the breakdown key, e.g. "tp_comm"

enum class Track { Stage, TpComm, PpComm, DpComm };

class Watchdog;

// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): unlike wall time it does not
// grow while other processes share the core.
double thread_cpu_seconds();

class PhaseTimer {
 public:
  // `sync` waits for the device (empty for synchronous backends); `process` names this rank
  // in the trace; `stage_track` names its compute row (e.g. "stage 1").
  PhaseTimer(std::function<void()> sync, bool trace, std::string process, std::string stage_track,
             Watchdog* watchdog = nullptr);

  // The trace's time origin (call after a barrier so ranks line up).
  void start_clock();
  double now_s() const;

  void begin_step();
  void end_step();
  const std::array<double, kNumPhases>& step_seconds() const { return step_; }
  double step_total_s() const;

  Phase current() const { return current_; }
  // Closes the running segment and makes `phase` current; returns the previous phase.
  Phase switch_to(Phase phase);

  bool tracing() const { return trace_; }
  void add_event(std::string name, Phase phase, Track track, double start_s, double end_s);
  std::vector<TraceEvent>& events() { return events_; }

  Watchdog* watchdog() const { return watchdog_; }

 private:
  std::function<void()> sync_;
  bool trace_;
  std::string process_;
  std::string stage_track_;
  Watchdog* watchdog_;
  std::chrono::steady_clock::time_point origin_;
  double segment_start_s_ = 0;
  Phase current_ = Phase::Other;
  std::array<double, kNumPhases> step_{};
  std::vector<TraceEvent> events_;
};

// Switches to `phase` for its lifetime. With a name (and tracing on) records a trace event;
// `micro_batch` and `chunk` >= 0 are appended to the name. Comm phases arm the watchdog with the
// name.
class PhaseScope {
 public:
  PhaseScope(PhaseTimer& timer, Phase phase, Track track = Track::Stage, const char* name = nullptr,
             int64_t micro_batch = -1, int64_t chunk = -1);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  PhaseTimer& timer_;
  Phase previous_;
  Phase phase_;
  Track track_;
  const char* name_;
  int64_t micro_batch_;
  int64_t chunk_;
  double start_s_;
  bool armed_ = false;
};

}  // namespace parplan::executor
