#include "core/cluster_spec.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/check.h"
#include "core/units.h"

namespace parplan {

namespace {

constexpr std::array<std::string_view, kNumPrecisions> kPrecisionNames = {"fp32", "fp16", "bf16",
                                                                          "fp8"};

// A figure: a number, or {"value": number|null, "source": "...", "note": "..."}.
// Returns `fallback` when absent (or null); records it as unsourced when a bare number.
class FigureReader {
 public:
  FigureReader(NodeSpec& node) : node_(node) {}

  std::optional<double> read(JsonReader& in, std::string_view key, double min, double max) {
    const Json* value = in.find(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    if (value->is_object()) {
      JsonReader figure(*value, in.file(), in.path_of(key));
      const auto number = figure.optional_number("value", min, max);
      const std::string source = figure.string_or("source", "");
      figure.allow("note");
      figure.allow("unit");
      figure.allow("alt_value");
      figure.finish();
      if (source.empty()) node_.unsourced_figures.push_back(in.path_of(key));
      return number;
    }
    node_.unsourced_figures.push_back(in.path_of(key));
    return json_to_number(*value, in.file(), in.path_of(key), min, max);
  }

  double require(JsonReader& in, std::string_view key, double min, double max) {
    if (!in.has(key)) in.fail(key, "nothing (the key is missing)", "a number or {value, source}");
    auto value = read(in, key, min, max);
    if (!value) in.fail(key, "null", "a number or {value, source}");
    return *value;
  }

  double get(JsonReader& in, std::string_view key, double fallback, double min, double max) {
    return read(in, key, min, max).value_or(fallback);
  }

  // Counts (GPUs, SMs, NICs, tile sizes): whole numbers, never silently truncated.
  int64_t require_count(JsonReader& in, std::string_view key, double min, double max) {
    return whole(in, key, require(in, key, min, max));
  }
  int64_t count_or(JsonReader& in, std::string_view key, int64_t fallback, double min, double max) {
    const auto value = read(in, key, min, max);
    return value ? whole(in, key, *value) : fallback;
  }

 private:
  static int64_t whole(JsonReader& in, std::string_view key, double value) {
    if (std::floor(value) != value) {
      std::ostringstream found;
      found << value;
      in.fail(key, found.str(), "a whole number");
    }
    return static_cast<int64_t>(value);
  }

 public:
 private:
  NodeSpec& node_;
};

void read_precision_table(JsonReader& parent, std::string_view key, FigureReader& figures,
                          std::array<double, kNumPrecisions>& out, double max, bool required) {
  auto table =
      required ? std::optional<JsonReader>(parent.object(key)) : parent.optional_object(key);
  if (!table) return;
  for (int i = 0; i < kNumPrecisions; ++i) {
    out[i] = figures.get(*table, kPrecisionNames[i], 0.0, 0.0, max);
  }
  table->finish();
}

// gpu.gemm_ramps: {"fp32": {"m_half", "n_half", "k_half"}, ...}, a precision's own ramps.
void read_gemm_ramps(JsonReader& gpu, FigureReader& figures, GpuSpec& g) {
  auto ramps = gpu.optional_object("gemm_ramps");
  if (!ramps) return;
  for (const auto& [name, value] : gpu.find("gemm_ramps")->items()) {
    const auto precision = parse_precision(name);
    if (!precision) ramps->fail(name, "a precision key", "fp32, fp16, bf16 or fp8");
    JsonReader one = ramps->object(name);
    GpuSpec::GemmRamps& r = g.gemm_ramps_by_precision[static_cast<int>(*precision)];
    r.m_half = figures.require(one, "m_half", 0, 1e6);
    r.n_half = figures.require(one, "n_half", 0, 1e6);
    r.k_half = figures.require(one, "k_half", 0, 1e6);
    // A zero m_half would read as "the node's": keep the fitted ramps as given.
    r.m_half = std::max(r.m_half, 1e-9);
    one.allow("source");
    one.finish();
  }
  ramps->finish();
}

}  // namespace

const char* to_string(Precision precision) {
  return kPrecisionNames[static_cast<int>(precision)].data();
}

std::optional<Precision> parse_precision(std::string_view text) {
  for (int i = 0; i < kNumPrecisions; ++i) {
    if (text == kPrecisionNames[i]) return static_cast<Precision>(i);
  }
  return std::nullopt;
}

double activation_bytes(Precision precision) { return precision == Precision::Fp32 ? 4.0 : 2.0; }

const char* to_string(IntraFabric fabric) {
  switch (fabric) {
    case IntraFabric::Mesh:
      return "mesh";
    case IntraFabric::Pcie:
      return "pcie";
    case IntraFabric::Switch:
      break;
  }
  return "switch";
}

double NodeSpec::nic_bandwidth_bytes_per_s() const {
  return gbit_to_bytes_per_s(inter.nic_gbit_per_s) * inter.nic_busbw_efficiency;
}

NodeSpec parse_node_spec(const Json& object, const std::string& file, const std::string& path) {
  JsonReader in(object, file, path);
  NodeSpec node;
  FigureReader figures(node);
  node.name = in.require_string("name");
  node.description = in.string_or("description", "");
  in.allow("sources");
  in.allow("notes");
  node.gpus_per_node = figures.require_count(in, "gpus_per_node", 1, 4096);
  node.node_overhead_w = figures.get(in, "node_overhead_w", -1, 0, 1e7);
  node.host_link_gbps = figures.get(in, "host_link_gbps", -1, 0.001, 1e6);
  node.host_cpu_vendor = in.choice_or("host_cpu_vendor", node.host_cpu_vendor, kHostCpuVendors);

  {
    JsonReader gpu = in.object("gpu");
    GpuSpec& g = node.gpu;
    g.name = gpu.require_string("name");
    g.vendor = gpu.choice_or("vendor", "nvidia", {"nvidia", "amd", "cpu", "other"});
    g.architecture =
        gpu.choice_or("architecture", g.vendor == "cpu" ? "cpu" : "hopper",
                      {"volta", "ampere", "ada", "hopper", "blackwell", "cdna3", "cpu", "other"});
    g.memory_gib = figures.require(gpu, "memory_gib", 0.001, 1e6);
    g.hbm_bandwidth_gbps = figures.require(gpu, "hbm_bandwidth_gbps", 0.001, 1e7);
    g.hbm_efficiency = figures.get(gpu, "hbm_efficiency", g.hbm_efficiency, 0.01, 1.0);
    read_precision_table(gpu, "dense_tflops", figures, g.dense_tflops, 1e7, true);
    read_precision_table(gpu, "matmul_efficiency", figures, g.matmul_efficiency, 1.0, false);
    g.sustained_clock_fraction =
        figures.get(gpu, "sustained_clock_fraction", g.sustained_clock_fraction, 0.05, 1.0);
    g.sm_count = figures.count_or(gpu, "sm_count", 0, 0, 1e6);
    g.l2_cache_mib = figures.get(gpu, "l2_cache_mib", 0, 0, 1e6);
    g.kernel_launch_us = figures.get(gpu, "kernel_launch_us", g.kernel_launch_us, 0, 1e4);
    g.tdp_w = figures.get(gpu, "tdp_w", 0, 1, 1e5);
    g.gemm_m_half = figures.get(gpu, "gemm_m_half", g.gemm_m_half, 0, 1e6);
    g.gemm_n_half = figures.get(gpu, "gemm_n_half", g.gemm_n_half, 0, 1e6);
    g.gemm_k_half = figures.get(gpu, "gemm_k_half", g.gemm_k_half, 0, 1e6);
    g.gemm_tile_m = figures.count_or(gpu, "gemm_tile_m", g.gemm_tile_m, 0, 4096);
    g.gemm_tile_n = figures.count_or(gpu, "gemm_tile_n", g.gemm_tile_n, 0, 4096);
    if (auto kernels = gpu.optional_object("kernel_gbps")) {
      const Json* raw = gpu.find("kernel_gbps");
      for (const auto& [kind, value] : raw->items()) {
        g.kernel_gbps[kind] = figures.require(*kernels, kind, 1e-9, 1e7);
      }
      kernels->finish();
    }
    if (auto attention = gpu.optional_object("attention_tflops")) {
      g.attention_forward_tflops = figures.get(*attention, "forward", 0, 0, 1e7);
      g.attention_backward_tflops = figures.get(*attention, "backward", 0, 0, 1e7);
      attention->finish();
    }
    read_gemm_ramps(gpu, figures, g);
    if (gpu.has("kernel_figures_precision")) {
      g.kernel_figures_precision = parse_precision(
          gpu.require_choice("kernel_figures_precision", {"fp32", "fp16", "bf16", "fp8"}));
    }
    gpu.allow("notes");
    gpu.finish();
    // Accelerators need a 16-bit peak; a CPU (vendor "cpu", measured by parplan profile)
    // computes in fp32 and needs that one instead.
    if (g.vendor == "cpu") {
      if (g.peak_tflops(Precision::Fp32) <= 0) {
        gpu.fail("dense_tflops", "no fp32 figure", "a positive fp32 peak for vendor cpu");
      }
    } else if (g.peak_tflops(Precision::Bf16) <= 0 && g.peak_tflops(Precision::Fp16) <= 0) {
      gpu.fail("dense_tflops", "no bf16 or fp16 figure", "a positive bf16 or fp16 peak");
    }
    // Missing efficiencies default to the 16-bit one (the fp32 one on a CPU; a measured value
    // is always better).
    const Precision base_precision = g.vendor == "cpu" ? Precision::Fp32 : Precision::Bf16;
    const double base = g.matmul_efficiency[static_cast<int>(base_precision)] > 0
                            ? g.matmul_efficiency[static_cast<int>(base_precision)]
                            : 0.8;
    for (auto& e : g.matmul_efficiency) {
      if (e <= 0) e = base;
    }
  }
  {
    JsonReader intra = in.object("intra_node");
    IntraNodeSpec& s = node.intra;
    const std::string fabric = intra.require_choice("fabric", {"switch", "mesh", "pcie"});
    s.fabric = fabric == "mesh"   ? IntraFabric::Mesh
               : fabric == "pcie" ? IntraFabric::Pcie
                                  : IntraFabric::Switch;
    s.link_bandwidth_gbps = figures.require(intra, "link_bandwidth_gbps", 0.001, 1e6);
    s.busbw_efficiency = figures.get(intra, "busbw_efficiency", s.busbw_efficiency, 0.01, 1.0);
    s.nvls_allreduce_busbw_gbps = figures.get(intra, "nvls_allreduce_busbw_gbps", 0, 0, 1e6);
    s.island_gpus = figures.count_or(intra, "island_gpus", 1, 1, 4096);
    s.island_bandwidth_gbps = figures.get(intra, "island_bandwidth_gbps", 0, 0, 1e6);
    s.latency_us = figures.get(intra, "latency_us", s.latency_us, 0, 1e6);
    intra.allow("notes");
    intra.finish();
  }
  // A server without an inter-node network (a workstation, a single box) may leave
  // inter_node out: it has no NICs, and a job of more than one such node is refused
  // (core/job.cpp).
  if (auto inter = in.optional_object("inter_node")) {
    InterNodeSpec& s = node.inter;
    s.nics_per_node = figures.require_count(*inter, "nics_per_node", 0, 4096);
    s.nic_gbit_per_s = figures.require(*inter, "nic_gbit_per_s", 0, 1e6);
    s.nic_busbw_efficiency =
        figures.get(*inter, "nic_busbw_efficiency", s.nic_busbw_efficiency, 0.01, 1.0);
    s.latency_us = figures.get(*inter, "latency_us", s.latency_us, 0, 1e6);
    inter->allow("notes");
    inter->finish();
  } else {
    node.inter.nics_per_node = 0;
    node.inter.nic_gbit_per_s = 0;
  }
  if (const Json* fits = in.find("collective_fits"); fits != nullptr && !fits->is_null()) {
    if (!fits->is_array()) {
      in.fail("collective_fits", describe_json_value(*fits),
              "a list of {op, span, latency_us, busbw_gbps}");
    }
    for (std::size_t i = 0; i < fits->size(); ++i) {
      JsonReader f((*fits)[i], file, in.path_of("collective_fits") + "[" + std::to_string(i) + "]");
      CollectiveFit fit;
      fit.op = f.require_choice(
          "op", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"});
      fit.span = f.require_choice("span", {"intra_node", "inter_node"});
      fit.group_size = f.int_or("group_size", 0, 0, 100'000'000);
      fit.latency_us = f.require_number("latency_us", 0, 1e7);
      fit.busbw_gbps = f.require_number("busbw_gbps", 1e-6, 1e7);
      fit.min_size_bytes = f.number_or("min_size_bytes", 0, 0, 1e18);
      fit.max_size_bytes = f.number_or("max_size_bytes", 0, 0, 1e18);
      if (fit.max_size_bytes > 0 && fit.max_size_bytes <= fit.min_size_bytes) {
        f.fail("max_size_bytes", std::to_string(fit.max_size_bytes),
               "0 (unbounded) or a size above min_size_bytes");
      }
      fit.rms_relative_error = f.number_or("rms_relative_error", -1, -1, 1e6);
      f.allow("source");
      f.finish();
      node.collective_fits.push_back(fit);
    }
  }
  in.finish();
  return node;
}

namespace {
Json collective_fits_to_json(const std::vector<CollectiveFit>& fits) {
  Json out = Json::array();
  for (const auto& f : fits) {
    Json fit = {{"op", f.op},
                {"span", f.span},
                {"group_size", f.group_size},
                {"latency_us", f.latency_us},
                {"busbw_gbps", f.busbw_gbps},
                {"min_size_bytes", f.min_size_bytes},
                {"max_size_bytes", f.max_size_bytes}};
    if (f.rms_relative_error >= 0) fit["rms_relative_error"] = f.rms_relative_error;
    out.push_back(fit);
  }
  return out;
}

Json gemm_ramps_to_json(const GpuSpec& gpu) {
  Json out = Json::object();
  for (int i = 0; i < kNumPrecisions; ++i) {
    const GpuSpec::GemmRamps& r = gpu.gemm_ramps_by_precision[i];
    if (r.m_half <= 0) continue;
    out[std::string(kPrecisionNames[i])] = {
        {"m_half", r.m_half}, {"n_half", r.n_half}, {"k_half", r.k_half}};
  }
  return out;
}

Json node_figures_to_json(const NodeSpec& node) {
  Json tflops = Json::object();
  Json efficiency = Json::object();
  for (int i = 0; i < kNumPrecisions; ++i) {
    tflops[std::string(kPrecisionNames[i])] = node.gpu.dense_tflops[i];
    efficiency[std::string(kPrecisionNames[i])] = node.gpu.matmul_efficiency[i];
  }
  return {{"name", node.name},
          {"description", node.description},
          {"gpus_per_node", node.gpus_per_node},
          {"gpu",
           {{"name", node.gpu.name},
            {"vendor", node.gpu.vendor},
            {"architecture", node.gpu.architecture},
            {"memory_gib", node.gpu.memory_gib},
            {"hbm_bandwidth_gbps", node.gpu.hbm_bandwidth_gbps},
            {"hbm_efficiency", node.gpu.hbm_efficiency},
            {"sustained_clock_fraction", node.gpu.sustained_clock_fraction},
            {"dense_tflops", tflops},
            {"matmul_efficiency", efficiency},
            {"sm_count", node.gpu.sm_count},
            {"l2_cache_mib", node.gpu.l2_cache_mib},
            {"kernel_launch_us", node.gpu.kernel_launch_us},
            {"gemm_m_half", node.gpu.gemm_m_half},
            {"gemm_n_half", node.gpu.gemm_n_half},
            {"gemm_k_half", node.gpu.gemm_k_half},
            {"gemm_tile_m", node.gpu.gemm_tile_m},
            {"gemm_tile_n", node.gpu.gemm_tile_n},
            {"kernel_gbps", node.gpu.kernel_gbps},
            {"attention_tflops",
             {{"forward", node.gpu.attention_forward_tflops},
              {"backward", node.gpu.attention_backward_tflops}}}}},
          {"intra_node",
           {{"fabric", to_string(node.intra.fabric)},
            {"link_bandwidth_gbps", node.intra.link_bandwidth_gbps},
            {"busbw_efficiency", node.intra.busbw_efficiency},
            {"nvls_allreduce_busbw_gbps", node.intra.nvls_allreduce_busbw_gbps},
            {"island_gpus", node.intra.island_gpus},
            {"island_bandwidth_gbps", node.intra.island_bandwidth_gbps},
            {"latency_us", node.intra.latency_us}}},
          {"inter_node",
           {{"nics_per_node", node.inter.nics_per_node},
            {"nic_gbit_per_s", node.inter.nic_gbit_per_s},
            {"nic_busbw_efficiency", node.inter.nic_busbw_efficiency},
            {"latency_us", node.inter.latency_us}}},
          {"collective_fits", collective_fits_to_json(node.collective_fits)}};
}
}  // namespace

Json node_spec_to_json(const NodeSpec& node) {
  Json out = node_figures_to_json(node);
  // Power figures only when given, so that a node without them writes what it always did.
  if (node.gpu.tdp_w > 0) out["gpu"]["tdp_w"] = node.gpu.tdp_w;
  if (node.node_overhead_w >= 0) out["node_overhead_w"] = node.node_overhead_w;
  if (node.host_link_gbps > 0) out["host_link_gbps"] = node.host_link_gbps;
  if (node.host_cpu_vendor != NodeSpec{}.host_cpu_vendor) {
    out["host_cpu_vendor"] = node.host_cpu_vendor;
  }
  // Likewise a precision's own GEMM ramps and the precision of the kernel figures.
  Json ramps = gemm_ramps_to_json(node.gpu);
  if (!ramps.empty()) out["gpu"]["gemm_ramps"] = ramps;
  if (node.gpu.kernel_figures_precision) {
    out["gpu"]["kernel_figures_precision"] = to_string(*node.gpu.kernel_figures_precision);
  }
  return out;
}

}  // namespace parplan
