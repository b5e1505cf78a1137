// Calibration: a few named physical factors fitted to a user's measured runs (`parplan
// calibrate`, docs/calibration.md) that the cost model applies where the physics lives:
//   compute_throughput_fraction  multiplies the sustained tensor-core clock fraction
//                                (GpuSpec::sustained_clock_fraction: GEMMs and attention);
//   intra_node_busbw_fraction    multiplies the bus bandwidth of collectives inside a node
//                                (link efficiency, NVLS, NVLink islands, measured intra fits);
//   inter_node_busbw_fraction    multiplies the achievable NIC bandwidth across nodes (NIC
//                                efficiency, measured inter-node fits);
//   moe_throughput_fraction      multiplies the throughput of a MoE layer's expert block: router,
//                                token permutation, grouped expert GEMMs, expert activation,
//                                shared experts, the expert-parallel dispatch and the expert-TP
//                                gathers (the MoE software stack: dispatcher, grouped GEMM,
//                                fusions, host synchronisation of the token counts), applied in
//                                cost_models/layer_cost.cpp moe_layer_time;
//   step_overhead_s              seconds added to every step (framework, data loader, logging);
//   micro_batch_overhead_s       seconds added to every micro-batch on every pipeline stage:
//                                the host-side cost of dispatching one forward and backward
//                                pass (Python, autograd, kernel launches the GPU waits for,
//                                the per-micro-batch data fetch and pipeline handshakes), a
//                                third in the forward pass and two thirds in the backward, which
//                                launches about twice the kernels (a data and a weight gradient
//                                per GEMM); applied in cost_models/step_model.cpp chunk_times;
//   memory_overhead_gib          GiB added to the framework workspace of every GPU.
// The defaults are the identity (x * 1.0 and x + 0.0 are exact), so a job without a
// calibration gives byte-identical results. Tested in tests/cost_models/calibration_fit_test.cpp.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/cluster_spec.h"
#include "core/json_input.h"

namespace parplan {

struct Calibration {
  double compute_throughput_fraction = 1.0;
  double intra_node_busbw_fraction = 1.0;
  double inter_node_busbw_fraction = 1.0;
  double moe_throughput_fraction = 1.0;
  double step_overhead_s = 0.0;
  double micro_batch_overhead_s = 0.0;
  double memory_overhead_gib = 0.0;

  bool is_identity() const;
};

// The factors by name, in the order above (the CAL.json keys).
enum class CalibrationFactor {
  Compute,
  IntraNode,
  InterNode,
  MoeThroughput,
  StepOverhead,
  MicroBatchOverhead,
  Memory
};
inline constexpr int kNumCalibrationFactors = 7;
const char* to_string(CalibrationFactor factor);
std::vector<CalibrationFactor> all_calibration_factors();
double& factor_value(Calibration& calibration, CalibrationFactor factor);
double factor_value(const Calibration& calibration, CalibrationFactor factor);
// Identity value of a factor (1 for fractions, 0 for the additive ones).
double identity_value(CalibrationFactor factor);
// Whether a factor adds seconds or GiB (the overheads) rather than scaling a figure.
bool is_additive(CalibrationFactor factor);

// The node with the calibration's fractions applied to its efficiency figures (compute,
// intra-node and inter-node bandwidth); the MoE fraction and the additive factors act in the
// layer, step and memory models (cost_models/layer_cost.cpp, step_model.cpp, memory_model.cpp)
// through Job::calibration.
NodeSpec calibrated_node(const NodeSpec& node, const Calibration& calibration);

// A calibration file (CAL.json, written by `parplan calibrate`): the factors and the node
// types they were fitted on; the rest of the file (runs, leave-one-out figures) is read only
// to be reported. Errors name the file and key path.
struct CalibrationFile {
  std::string path;
  Calibration factors;
  std::vector<std::string> node_types;
  std::vector<std::string> fitted;  // names of the fitted factors
  Json json;                        // the whole file
};
CalibrationFile load_calibration_file(const std::string& path);
// {"file": ..., "factors": {name: value} (fitted ones), "node_types": [...]}, for outputs.
Json calibration_summary_json(const CalibrationFile& file);

}  // namespace parplan
