#include "executor/phase_timer.h"

#include <time.h>

#include <numeric>

#include "executor/watchdog.h"

namespace parplan::executor {

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::Compute:
      return "compute";
    case Phase::Recompute:
      return "recompute";
    case Phase::TpComm:
      return "tp_comm";
    case Phase::PpComm:
      return "pp_comm";
    case Phase::DpComm:
      return "dp_comm";
    case Phase::PipelineBubble:
      return "pipeline_bubble";
    case Phase::Optimizer:
      return "optimizer";
    case Phase::Other:
      break;
  }
  return "other";
}

namespace {
bool is_comm(Phase p) {
  return p == Phase::TpComm || p == Phase::PpComm || p == Phase::DpComm ||
         p == Phase::PipelineBubble;
}
const char* track_name(Track track) {
  switch (track) {
    case Track::TpComm:
      return "tp comm";
    case Track::PpComm:
      return "pp comm";
    case Track::DpComm:
      return "dp comm";
    case Track::Stage:
      break;
  }
  return "";
}
}  // namespace

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

PhaseTimer::PhaseTimer(std::function<void()> sync, bool trace, std::string process,
                       std::string stage_track, Watchdog* watchdog)
    : sync_(std::move(sync)),
      trace_(trace),
      process_(std::move(process)),
      stage_track_(std::move(stage_track)),
      watchdog_(watchdog),
      origin_(std::chrono::steady_clock::now()) {}

void PhaseTimer::start_clock() {
  origin_ = std::chrono::steady_clock::now();
  segment_start_s_ = 0;
}

double PhaseTimer::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void PhaseTimer::begin_step() {
  if (sync_) sync_();
  step_.fill(0);
  current_ = Phase::Other;
  segment_start_s_ = now_s();
}

void PhaseTimer::end_step() { switch_to(Phase::Other); }

double PhaseTimer::step_total_s() const { return std::accumulate(step_.begin(), step_.end(), 0.0); }

Phase PhaseTimer::switch_to(Phase phase) {
  if (sync_) sync_();
  const double now = now_s();
  step_[static_cast<int>(current_)] += now - segment_start_s_;
  segment_start_s_ = now;
  const Phase previous = current_;
  current_ = phase;
  return previous;
}

void PhaseTimer::add_event(std::string name, Phase phase, Track track, double start_s,
                           double end_s) {
  TraceEvent e;
  e.name = std::move(name);
  e.category = to_string(phase);
  e.track = track == Track::Stage ? stage_track_ : track_name(track);
  e.process = process_;
  e.start_s = start_s;
  e.duration_s = end_s - start_s;
  events_.push_back(std::move(e));
}

PhaseScope::PhaseScope(PhaseTimer& timer, Phase phase, Track track, const char* name,
                       int64_t micro_batch, int64_t chunk)
    : timer_(timer),
      phase_(phase),
      track_(track),
      name_(name),
      micro_batch_(micro_batch),
      chunk_(chunk) {
  previous_ = timer_.switch_to(phase);
  start_s_ = timer_.tracing() && name_ != nullptr ? timer_.now_s() : 0;
  if (is_comm(phase) && timer_.watchdog() != nullptr) {
    timer_.watchdog()->arm(name_ != nullptr ? name_ : to_string(phase));
    armed_ = true;
  }
}

PhaseScope::~PhaseScope() {
  timer_.switch_to(previous_);
  if (armed_) timer_.watchdog()->disarm();
  if (timer_.tracing() && name_ != nullptr) {
    std::string name = name_;
    if (micro_batch_ >= 0) name += " mb" + std::to_string(micro_batch_);
    if (chunk_ >= 0) name += " c" + std::to_string(chunk_);
    timer_.add_event(std::move(name), phase_, track_, start_s_, timer_.now_s());
  }
}

}  // namespace parplan::executor
