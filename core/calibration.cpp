#include "core/calibration.h"

#include <set>

#include "core/check.h"

namespace parplan {

bool Calibration::is_identity() const {
  for (const CalibrationFactor f : all_calibration_factors()) {
    if (factor_value(*this, f) != identity_value(f)) return false;
  }
  return true;
}

const char* to_string(CalibrationFactor factor) {
  switch (factor) {
    case CalibrationFactor::Compute:
      return "compute_throughput_fraction";
    case CalibrationFactor::IntraNode:
      return "intra_node_busbw_fraction";
    case CalibrationFactor::InterNode:
      return "inter_node_busbw_fraction";
    case CalibrationFactor::MoeThroughput:
      return "moe_throughput_fraction";
    case CalibrationFactor::StepOverhead:
      return "step_overhead_s";
    case CalibrationFactor::MicroBatchOverhead:
      return "micro_batch_overhead_s";
    case CalibrationFactor::Memory:
      break;
  }
  return "memory_overhead_gib";
}

std::vector<CalibrationFactor> all_calibration_factors() {
  return {CalibrationFactor::Compute,      CalibrationFactor::IntraNode,
          CalibrationFactor::InterNode,    CalibrationFactor::MoeThroughput,
          CalibrationFactor::StepOverhead, CalibrationFactor::MicroBatchOverhead,
          CalibrationFactor::Memory};
}

double& factor_value(Calibration& c, CalibrationFactor factor) {
  switch (factor) {
    case CalibrationFactor::Compute:
      return c.compute_throughput_fraction;
    case CalibrationFactor::IntraNode:
      return c.intra_node_busbw_fraction;
    case CalibrationFactor::InterNode:
      return c.inter_node_busbw_fraction;
    case CalibrationFactor::MoeThroughput:
      return c.moe_throughput_fraction;
    case CalibrationFactor::StepOverhead:
      return c.step_overhead_s;
    case CalibrationFactor::MicroBatchOverhead:
      return c.micro_batch_overhead_s;
    case CalibrationFactor::Memory:
      break;
  }
  return c.memory_overhead_gib;
}

double factor_value(const Calibration& c, CalibrationFactor factor) {
  return factor_value(const_cast<Calibration&>(c), factor);
}

bool is_additive(CalibrationFactor factor) {
  return factor == CalibrationFactor::StepOverhead ||
         factor == CalibrationFactor::MicroBatchOverhead || factor == CalibrationFactor::Memory;
}

double identity_value(CalibrationFactor factor) { return is_additive(factor) ? 0.0 : 1.0; }

NodeSpec calibrated_node(const NodeSpec& node, const Calibration& c) {
  NodeSpec out = node;
  out.gpu.sustained_clock_fraction *= c.compute_throughput_fraction;
  // Every intra-node bus bandwidth of cost_models/collective_model.cpp goes through
  // busbw_efficiency except the NVLS all-reduce figure; measured fits replace both.
  out.intra.busbw_efficiency *= c.intra_node_busbw_fraction;
  out.intra.nvls_allreduce_busbw_gbps *= c.intra_node_busbw_fraction;
  out.inter.nic_busbw_efficiency *= c.inter_node_busbw_fraction;
  for (CollectiveFit& fit : out.collective_fits) {
    fit.busbw_gbps *=
        fit.span == "inter_node" ? c.inter_node_busbw_fraction : c.intra_node_busbw_fraction;
  }
  return out;
}

namespace {

// Bounds every factor may take in a file (wider than the fit's: a hand-edited file may hold
// any physical value): fractions in (0, 4], overhead seconds and GiB of plausible size.
struct FileRange {
  double min;
  double max;
};
FileRange file_range(CalibrationFactor factor) {
  switch (factor) {
    case CalibrationFactor::StepOverhead:
      return {0.0, 3600.0};
    case CalibrationFactor::MicroBatchOverhead:
      return {0.0, 60.0};
    case CalibrationFactor::Memory:
      return {-1024.0, 1024.0};
    default:
      return {1e-3, 4.0};
  }
}

}  // namespace

CalibrationFile load_calibration_file(const std::string& path) {
  CalibrationFile out;
  out.path = path;
  out.json = load_json_file(path);
  if (!out.json.is_object()) {
    throw InputError(path, "(top level)", describe_json_value(out.json),
                     "a calibration object written by `parplan calibrate`");
  }
  JsonReader in(out.json, path, "");
  in.require_choice("format", {"parplan-calibration"});
  JsonReader factors = in.object("factors");
  for (const CalibrationFactor f : all_calibration_factors()) {
    const std::string name = to_string(f);
    if (!factors.has(name)) continue;
    JsonReader entry = factors.object(name);
    const FileRange range = file_range(f);
    factor_value(out.factors, f) = entry.require_number("value", range.min, range.max);
    if (entry.bool_or("fitted", false)) out.fitted.push_back(name);
    for (const char* key : {"bounds", "reason", "unit", "what", "explained_loss_fraction"}) {
      entry.allow(key);
    }
    entry.finish();
  }
  factors.finish();
  const Json* types = in.find("node_types");
  if (types == nullptr || !types->is_array() || types->empty()) {
    in.fail("node_types",
            types == nullptr ? "nothing (the key is missing)" : describe_json_value(*types),
            "a non-empty list of node names");
  }
  for (const Json& t : *types) {
    if (!t.is_string()) {
      in.fail("node_types", describe_json_value(t), "a list of node names (strings)");
    }
    out.node_types.push_back(t.get<std::string>());
  }
  for (const char* key :
       {"parplan_version", "runs", "leave_one_out", "fit", "selection_rule", "comment"}) {
    in.allow(key);
  }
  in.finish();
  return out;
}

Json calibration_summary_json(const CalibrationFile& file) {
  Json factors = Json::object();
  for (const CalibrationFactor f : all_calibration_factors()) {
    const double value = factor_value(file.factors, f);
    if (value != identity_value(f)) factors[to_string(f)] = value;
  }
  return {{"file", file.path}, {"factors", factors}, {"node_types", file.node_types}};
}

}  // namespace parplan
