#include "cost_models/step_trace.h"

#include "core/check.h"

namespace parplan::cost {

namespace {

struct Part {
  const char* name;
  double seconds;
};

}  // namespace

std::vector<TraceEvent> step_trace_events(const Job& job, const StepEstimate& e) {
  PARPLAN_CHECK(!e.chunk_parts.empty(), "the step estimate has no recorded pipeline events");
  const std::string process = "predicted: " + job.model.name + " (one data-parallel replica)";
  std::vector<TraceEvent> events;
  for (const PipelineEvent& a : e.pipeline.events) {
    const auto& parts = e.chunk_parts[a.stage][a.chunk];
    const bool forward = a.op == PipeOp::Forward;
    const std::string stage_track = "stage " + std::to_string(a.stage);
    const std::string comm_track = "stage " + std::to_string(a.stage) + " comm";
    const char* letter = forward ? "F" : a.op == PipeOp::BackwardWeight ? "W" : "B";
    const std::string label = std::string(letter) + " mb" + std::to_string(a.micro_batch) +
                              (job.plan.vpp > 1 ? " c" + std::to_string(a.chunk) : "");
    const double total = a.end_s - a.start_s;
    // The exposed communication of the pass, laid out after its compute on the comm track.
    const PassTime& pass = forward ? parts.forward : parts.backward;
    const double fsdp = forward ? parts.fsdp_forward : parts.fsdp_backward;
    const std::vector<Part> comm = {{"tp_comm", pass.tp_comm},
                                    {"cp_comm", pass.cp_comm},
                                    {"ep_comm", pass.ep_comm},
                                    {"fsdp_comm", fsdp}};
    double comm_total = 0;
    for (const auto& c : comm) comm_total += c.seconds;
    // Zero-bubble splits a backward into B and W; scale the parts to the action's length.
    const double nominal = pass.total() + fsdp;
    const double scale = nominal > 0 ? total / nominal : 0.0;
    const double compute = std::max(0.0, total - comm_total * scale);
    TraceEvent ev;
    ev.process = process;
    ev.track = stage_track;
    ev.name = label;
    ev.category = forward ? "compute" : (parts.recompute > 0 ? "compute+recompute" : "compute");
    ev.start_s = a.start_s;
    ev.duration_s = compute;
    ev.args = {{"op", to_string(a.op)},
               {"micro_batch", a.micro_batch},
               {"chunk", a.chunk},
               {"pass_s", total}};
    if (!forward && parts.recompute > 0) ev.args["recompute_s"] = parts.recompute;
    events.push_back(ev);
    double t = a.start_s + compute;
    for (const auto& c : comm) {
      if (c.seconds <= 0) continue;
      TraceEvent ce;
      ce.process = process;
      ce.track = comm_track;
      ce.name = std::string(c.name) + " " + label;
      ce.category = c.name;
      ce.start_s = t;
      ce.duration_s = c.seconds * scale;
      events.push_back(ce);
      t += ce.duration_s;
    }
    // Pipeline transfer of this pass's output to the neighbouring stage.
    if (e.p2p_s > 0) {
      TraceEvent p2p;
      p2p.process = process;
      p2p.track = comm_track;
      p2p.name = std::string("send ") + label;
      p2p.category = "pp_comm";
      p2p.start_s = a.end_s;
      p2p.duration_s = e.p2p_s;
      events.push_back(p2p);
    }
  }
  // Data-parallel reduction and the optimizer step after each stage's pipeline.
  for (std::size_t s = 0; s < e.pipeline.finish_s.size(); ++s) {
    const double start = e.pipeline.finish_s[s];
    if (s < e.dp_exposed_s.size() && e.dp_exposed_s[s] > 0) {
      events.push_back({"gradient reduction (exposed)", "dp_comm",
                        "stage " + std::to_string(s) + " comm", start, e.dp_exposed_s[s],
                        Json::object(), process});
    }
    if (s < e.optimizer_s.size() && e.optimizer_s[s] > 0) {
      const double dp = s < e.dp_exposed_s.size() ? e.dp_exposed_s[s] : 0.0;
      events.push_back({"optimizer step", "optimizer", "stage " + std::to_string(s), start + dp,
                        e.optimizer_s[s], Json::object(), process});
    }
  }
  return events;
}

}  // namespace parplan::cost
