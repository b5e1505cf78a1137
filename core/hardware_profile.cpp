#include "core/hardware_profile.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace parplan {

namespace {

// A list of records, each checked by `check` (which takes a reader and must finish() it).
template <typename Check>
void check_records(JsonReader& parent, std::string_view key, Check check) {
  const Json* list = parent.find(key);
  if (list == nullptr) parent.fail(key, "nothing (the key is missing)", "a list of records");
  if (!list->is_array()) parent.fail(key, describe_json_value(*list), "a list of records");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string path = parent.path_of(key) + "[" + std::to_string(i) + "]";
    if (!(*list)[i].is_object()) {
      throw InputError(parent.file(), path, describe_json_value((*list)[i]), "an object");
    }
    JsonReader record((*list)[i], parent.file(), path);
    check(record);
    record.finish();
  }
}

void check_sample_fields(JsonReader& r) {
  r.require_number("median_s", 0, 1e6);
  r.require_number("noise", 0, 1e6);
  r.require_int("samples", 1);
  r.bool_or("converged", true);
  r.optional_number("min_s", 0, 1e6);
  r.optional_number("max_s", 0, 1e6);
  r.optional_int("disturbed_samples", 0);
  r.optional_bool("disturbed_only");
  if (const Json* samples = r.find("samples_s"); samples != nullptr) {
    if (!samples->is_array()) r.fail("samples_s", describe_json_value(*samples), "a list");
    for (std::size_t i = 0; i < samples->size(); ++i) {
      json_to_number((*samples)[i], r.file(),
                     r.path_of("samples_s") + "[" + std::to_string(i) + "]", 0, 1e6);
    }
  }
}

void check_measurements(JsonReader& m) {
  check_records(m, "gemm", [](JsonReader& r) {
    r.require_int("m", 1);
    r.require_int("n", 1);
    r.require_int("k", 1);
    r.int_or("batch", 1, 1);
    r.require_choice("precision", {"fp64", "fp32", "fp16", "bf16", "fp8"});
    r.require_number("tflops", 0, 1e7);
    check_sample_fields(r);
  });
  check_records(m, "memory_bound", [](JsonReader& r) {
    r.require_string("kernel");
    r.require_choice("precision", {"fp64", "fp32", "fp16", "bf16", "fp8"});
    r.require_int("rows", 1);
    r.require_int("cols", 1);
    r.require_number("bytes", 0, 1e18);
    r.require_number("gbps", 0, 1e9);
    r.optional_number("flops", 0, 1e21);  // compute kernels (attention)
    r.optional_number("tflops", 0, 1e7);
    r.optional_bool("probe");  // a kernel of the profiled program
    check_sample_fields(r);
  });
  check_records(m, "collectives", [](JsonReader& r) {
    r.require_choice("op",
                     {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"});
    r.require_int("group_size", 2);
    r.require_choice("span", {"intra_node", "inter_node"});
    r.require_number("size_bytes", 1, 1e18);
    r.require_number("algbw_gbps", 0, 1e9);
    r.require_number("busbw_gbps", 0, 1e9);
    r.optional_number("kernel_median_s", 0, 1e6);
    check_sample_fields(r);
  });
  m.finish();
}

void check_string_map(JsonReader& parent, std::string_view key) {
  const Json* map = parent.find(key);
  if (map == nullptr) return;
  if (!map->is_object()) parent.fail(key, describe_json_value(*map), "an object of strings");
  for (const auto& [name, value] : map->items()) {
    if (!value.is_string()) {
      throw InputError(parent.file(), parent.path_of(key) + "." + name, describe_json_value(value),
                       "a string");
    }
  }
}

double log_distance(double a, double b) {
  return std::abs(std::log(std::max(a, 1.0)) - std::log(std::max(b, 1.0)));
}

}  // namespace

bool HardwareProfile::measured_span(std::string_view span) const {
  const Json* spans = coverage.is_object() && coverage.contains("collective_spans")
                          ? &coverage["collective_spans"]
                          : nullptr;
  if (spans == nullptr) return false;
  return std::any_of(spans->begin(), spans->end(),
                     [&](const Json& s) { return s.is_string() && s.get<std::string>() == span; });
}

bool is_hardware_profile(const Json& value) {
  if (!value.is_object()) return false;
  const auto it = value.find("schema");
  return it != value.end() && it->is_string() &&
         it->get<std::string>().starts_with("parplan-profile/");
}

HardwareProfile parse_hardware_profile(const Json& value, const std::string& file) {
  if (!value.is_object()) {
    throw InputError(file, "", describe_json_value(value), "a parplan profile object");
  }
  JsonReader in(value, file, "");
  HardwareProfile profile;
  profile.file = file;
  const std::string schema = in.require_string("schema");
  if (schema != kProfileSchema) {
    in.fail("schema", "\"" + schema + "\"", "\"" + std::string(kProfileSchema) + "\"");
  }
  profile.created_utc = in.require_string("created_utc");
  in.string_or("generator", "");
  {
    JsonReader host = in.object("host");
    host.require_string("hostname");
    host.string_or("cpu_model", "");
    host.choice_or("cpu_vendor", "other", kHostCpuVendors);
    host.require_int("cores", 1);
    host.optional_number("memory_gib", 0, 1e9);
    host.finish();
    profile.host = value["host"];
  }
  {
    JsonReader device = in.object("device");
    device.require_string("name");
    device.require_choice("vendor", {"nvidia", "amd", "cpu", "other"});
    device.require_choice("backend", {"cpu", "cuda"});
    device.require_number("memory_gib", 0, 1e9);
    device.int_or("per_host", 1, 1);
    device.optional_int("compute_capability", 0);
    check_string_map(device, "software");
    device.finish();
    profile.device = value["device"];
  }
  {
    JsonReader coverage = in.object("coverage");
    coverage.require_int("ranks", 1);
    coverage.require_int("hosts", 1);
    coverage.require_int("ranks_per_host", 1);
    coverage.bool_or("quick", false);
    coverage.optional_number("elapsed_s", 0, 1e9);
    for (std::string_view key : {"gemm_precisions", "collective_spans", "collective_ops",
                                 "collective_group_sizes", "parts"}) {
      const Json* list = coverage.find(key);
      if (list != nullptr && !list->is_array()) {
        coverage.fail(key, describe_json_value(*list), "a list");
      }
    }
    if (const Json* spans = coverage.find("collective_spans"); spans != nullptr) {
      for (std::size_t i = 0; i < spans->size(); ++i) {
        const Json& s = (*spans)[i];
        if (!s.is_string() || (s != "intra_node" && s != "inter_node")) {
          throw InputError(file, "coverage.collective_spans[" + std::to_string(i) + "]",
                           describe_json_value(s), "\"intra_node\" or \"inter_node\"");
        }
      }
    }
    coverage.finish();
    profile.coverage = value["coverage"];
  }
  if (!value.contains("node")) in.fail("node", "nothing (the key is missing)", "a node object");
  if (!value["node"].is_object()) in.fail("node", describe_json_value(value["node"]), "an object");
  in.allow("node");
  profile.node = parse_node_spec(value["node"], file, "node");
  if (const Json* fits = in.find("fits"); fits != nullptr) {
    if (!fits->is_object()) in.fail("fits", describe_json_value(*fits), "an object");
    profile.fits = *fits;
  }
  {
    JsonReader measurements = in.object("measurements");
    check_measurements(measurements);
    profile.measurements = value["measurements"];
  }
  if (const Json* warnings = in.find("warnings"); warnings != nullptr && !warnings->is_array()) {
    in.fail("warnings", describe_json_value(*warnings), "a list of strings");
  }
  in.finish();
  return profile;
}

HardwareProfile load_hardware_profile(const std::string& path) {
  return parse_hardware_profile(load_json_file(path), path);
}

ClusterSpec apply_profile(const ClusterSpec& cluster, const HardwareProfile& profile) {
  ClusterSpec out = cluster;
  NodeSpec& node = out.node;
  const NodeSpec& measured = profile.node;
  node.name = cluster.node.name + "+profile";
  node.description = measured.description;
  node.gpu = measured.gpu;
  // GPU profiles time short bursts; the preset's sustained-clock figure describes long runs
  // of the cluster's GPUs and stays.
  if (measured.gpu.vendor != "cpu") {
    node.gpu.sustained_clock_fraction = cluster.node.gpu.sustained_clock_fraction;
  }
  // A profile measures speed, not power: the preset's TDP stays unless the profile gives one.
  if (node.gpu.tdp_w <= 0) node.gpu.tdp_w = cluster.node.gpu.tdp_w;
  node.collective_fits = measured.collective_fits;
  // The measured host's CPU vendor (NCCL's ring model across nodes depends on it), where the
  // profile recorded one: older profiles did not, and keep the preset's.
  if (profile.host.is_object() && profile.host.contains("cpu_vendor")) {
    node.host_cpu_vendor = measured.host_cpu_vendor;
  }
  if (profile.measured_span("intra_node")) node.intra = measured.intra;
  if (profile.measured_span("inter_node") && measured.inter.nics_per_node > 0) {
    node.inter = measured.inter;
  }
  node.unsourced_figures = measured.unsourced_figures;
  return out;
}

const CollectiveFit* find_collective_fit(const NodeSpec& node, Collective op, std::string_view span,
                                         int64_t group_size, double size_bytes) {
  const std::string_view name = to_string(op);
  // 1. Which group size: exact, then "any" (0), then the nearest measured one.
  int64_t chosen = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& f : node.collective_fits) {
    if (f.op != name || f.span != span) continue;
    if (f.group_size == group_size) {
      chosen = group_size;
      break;
    }
    const double distance = f.group_size == 0 ? 1e-3  // "any" beats every other size
                                              : log_distance(static_cast<double>(f.group_size),
                                                             static_cast<double>(group_size));
    if (distance < best_distance) {
      best_distance = distance;
      chosen = f.group_size;
    }
  }
  if (chosen < 0) return nullptr;
  // 2. Which size range: the one holding size_bytes, else the nearest end.
  const CollectiveFit* best = nullptr;
  double best_gap = std::numeric_limits<double>::infinity();
  for (const auto& f : node.collective_fits) {
    if (f.op != name || f.span != span || f.group_size != chosen) continue;
    const bool above_min = size_bytes >= f.min_size_bytes;
    const bool below_max = f.max_size_bytes <= 0 || size_bytes < f.max_size_bytes;
    if (above_min && below_max) return &f;
    const double gap = !above_min ? log_distance(f.min_size_bytes, size_bytes)
                                  : log_distance(size_bytes, f.max_size_bytes);
    if (gap < best_gap) {
      best_gap = gap;
      best = &f;
    }
  }
  return best;
}

std::optional<double> fitted_collective_time_s(const NodeSpec& node, Collective op,
                                               std::string_view span, int64_t group_size,
                                               double size_bytes) {
  const CollectiveFit* fit = find_collective_fit(node, op, span, group_size, size_bytes);
  if (fit == nullptr) return std::nullopt;
  return collective_time_s(op, group_size, size_bytes, fit->latency_us, fit->busbw_gbps);
}

}  // namespace parplan
