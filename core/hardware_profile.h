// A measured hardware profile (the file `parplan profile` writes, schema "parplan-profile/1",
// documented in profiler/README.md) and how it replaces a node preset's figures in a
// cluster. The profile's "node" key has exactly the node-preset schema (core/cluster_spec.h),
// so a profile can stand wherever a node file can. Fitted collectives are looked up here for
// the cost model. Tested in tests/profiler/hardware_profile_test.cpp (round trip, bad input,
// apply rules, fit lookup).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/cluster_spec.h"
#include "core/collective.h"
#include "core/json_input.h"

namespace parplan {

inline constexpr std::string_view kProfileSchema = "parplan-profile/1";

struct HardwareProfile {
  NodeSpec node;
  // What the run covered: {ranks, hosts, ranks_per_host, gemm_precisions,
  // collective_spans, ...}; apply_profile reads collective_spans.
  Json coverage;
  Json host;          // {hostname, cpu_model, cpu_vendor, cores, memory_gib}
  Json device;        // {name, vendor, backend, memory_gib, software{...}}
  Json fits;          // fitted parameters with their errors (also folded into `node`)
  Json measurements;  // {gemm: [...], memory_bound: [...], collectives: [...]}
  std::string created_utc;
  std::string file;

  bool measured_span(std::string_view span) const;  // "intra_node" or "inter_node"
};

// True when a JSON object is a profile (its "schema" key names parplan-profile/...).
bool is_hardware_profile(const Json& value);

// Strict: unknown keys, wrong types and out-of-range values are InputErrors naming the file
// and key path. `file` names the source in errors.
HardwareProfile parse_hardware_profile(const Json& value, const std::string& file);
HardwareProfile load_hardware_profile(const std::string& path);

// The profile's node replaces the cluster's node figures: the GPU (device) entirely and the
// collective fits. Topology stays the cluster's: gpus_per_node, num_nodes and num_gpus come
// from the job (the profile may have been measured with fewer ranks per host than the job
// uses; per-device and per-link figures do not depend on that). Intra-node figures come from
// the profile only when it measured intra-node collectives (two or more ranks on one host),
// inter-node figures (NICs, latency) only when it measured across hosts; otherwise the
// preset's stay. A GPU profile times short bursts, so the preset's sustained_clock_fraction
// stays too (a CPU profile's own 1.0 is used). The node keeps the preset's name with
// "+profile" appended.
ClusterSpec apply_profile(const ClusterSpec& cluster, const HardwareProfile& profile);

// The fit for (op, span) that best matches: the exact group size, else a fit for any group
// size (group_size 0), else the nearest measured group size (busbw is normalised by the
// bus factor, so it carries over between group sizes); among those the one whose size range
// holds `size_bytes` (else the nearest range). nullptr when the node has no fit for op/span.
const CollectiveFit* find_collective_fit(const NodeSpec& node, Collective op, std::string_view span,
                                         int64_t group_size, double size_bytes);

// collective_time_s with the fit above; nullopt when there is none.
std::optional<double> fitted_collective_time_s(const NodeSpec& node, Collective op,
                                               std::string_view span, int64_t group_size,
                                               double size_bytes);

}  // namespace parplan
