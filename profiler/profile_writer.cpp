#include "profiler/profile_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/check.h"
#include "core/hardware_profile.h"
#include "core/plural.h"
#include "profiler/fit_collective.h"
#include "profiler/gemm_shapes.h"

namespace parplan::profiler {

namespace {

std::string format(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

std::string percent(double fraction) { return format(fraction * 100.0, 3) + " %"; }

// Builds {"value", "source"} figures that all start with the same provenance.
class Figures {
 public:
  Figures(const std::string& host, const std::string& date)
      : prefix_("measured by parplan profile on " + host + " at " + date) {}

  Json measured(double value, const std::string& detail) const {
    return {{"value", value}, {"source", prefix_ + ": " + detail}};
  }
  // A figure the run read or derived rather than timed.
  Json derived(double value, const std::string& detail) const {
    return {{"value", value}, {"source", "read by parplan profile: " + detail}};
  }

 private:
  std::string prefix_;
};

Json samples_json(const Measurement& m) {
  Json out = {{"median_s", m.median_s},   {"noise", m.noise}, {"samples", m.count},
              {"converged", m.converged}, {"min_s", m.min_s}, {"max_s", m.max_s},
              {"samples_s", m.samples_s}};
  if (m.disturbed > 0) out["disturbed_samples"] = m.disturbed;
  if (m.disturbed_only) out["disturbed_only"] = true;
  return out;
}

Json measurements_json(const RawProfile& raw) {
  Json gemm = Json::array();
  for (const auto& g : raw.gemm) {
    Json r = {{"m", g.shape.m},         {"n", g.shape.n},           {"k", g.shape.k},
              {"batch", g.shape.batch}, {"precision", g.precision}, {"tflops", g.tflops()}};
    r.update(samples_json(g.time));
    gemm.push_back(r);
  }
  Json memory = Json::array();
  for (const auto& m : raw.memory_bound) {
    Json r = {{"kernel", m.kernel}, {"precision", m.precision}, {"rows", m.rows},
              {"cols", m.cols},     {"bytes", m.bytes},         {"gbps", m.gbps()}};
    if (m.flops > 0) {
      r["flops"] = m.flops;
      r["tflops"] = m.flops / m.time.median_s / 1e12;
    }
    if (m.probe) r["probe"] = true;
    r.update(samples_json(m.time));
    memory.push_back(r);
  }
  Json collectives = Json::array();
  for (const auto& c : raw.collectives) {
    Json r = {{"op", to_string(c.op)},
              {"group_size", c.group_size},
              {"span", c.span},
              {"size_bytes", c.size_bytes},
              {"algbw_gbps", c.algbw_gbps()},
              {"busbw_gbps", c.busbw_gbps()}};
    if (c.kernel_median_s >= 0) r["kernel_median_s"] = c.kernel_median_s;
    r.update(samples_json(c.time));
    collectives.push_back(r);
  }
  return {{"gemm", gemm}, {"memory_bound", memory}, {"collectives", collectives}};
}

const MemoryBoundRecord* find_kernel(const RawProfile& raw, const std::string& kernel) {
  for (const auto& m : raw.memory_bound) {
    if (m.kernel == kernel) return &m;
  }
  return nullptr;
}

Json gemm_fit_json(const GemmFits& fits, const RawProfile& raw) {
  Json throughput = Json::object();
  for (std::size_t i = 0; i < fits.precisions.size(); ++i) {
    throughput[fits.precisions[i]] = fits.result.model.throughput_tflops[i];
  }
  return {{"precisions", fits.precisions},
          {"throughput_tflops", throughput},
          {"gemm_m_half", fits.result.model.m_half},
          {"gemm_n_half", fits.result.model.n_half},
          {"gemm_k_half", fits.result.model.k_half},
          {"kernel_launch_us", fits.result.model.launch_us},
          {"sm_count", raw.device.sm_count},
          {"memory_bandwidth_gbps", fits.input.memory_bandwidth_gbps},
          {"points", fits.result.points},
          {"launch_bound_points", fits.result.launch_bound_points},
          {"excluded_disturbed_points", fits.excluded_disturbed},
          {"rms_relative_error", fits.result.rms_relative_error},
          {"max_relative_error", fits.result.max_relative_error}};
}

// The all-reduce fit of the largest group of a span: its first range (latency) and last
// range (bandwidth).
struct SpanFigures {
  bool measured = false;
  int64_t group_size = 0;
  double latency_us = 0;
  double busbw_gbps = 0;
  double large_size_bytes = 0;
};

SpanFigures span_figures(const std::vector<CollectiveFit>& fits, const std::string& span) {
  SpanFigures out;
  for (const auto& f : fits) {
    if (f.op == "all_reduce" && f.span == span)
      out.group_size = std::max(out.group_size, f.group_size);
  }
  for (const auto& f : fits) {
    if (f.op != "all_reduce" || f.span != span || f.group_size != out.group_size) continue;
    out.measured = true;
    if (f.min_size_bytes == 0) out.latency_us = f.latency_us;
    if (f.max_size_bytes == 0) {
      out.busbw_gbps = f.busbw_gbps;
      out.large_size_bytes = f.min_size_bytes;
    }
  }
  return out;
}

}  // namespace

GemmFits fit_gemms(const RawProfile& raw, const std::vector<std::string>& precisions,
                   double bandwidth_gbps) {
  GemmFits fits;
  fits.precisions = precisions;
  fits.input.precisions = precisions;
  for (const auto& p : precisions) fits.input.element_bytes.push_back(element_bytes(p));
  fits.input.memory_bandwidth_gbps = bandwidth_gbps;
  fits.input.sm_count = raw.device.sm_count;
  // Measurements whose every sample was disturbed (another process held a rank's core) are
  // left out of the fit while enough others remain.
  std::vector<GemmPoint> disturbed;
  for (const auto& g : raw.gemm) {
    const auto it = std::find(precisions.begin(), precisions.end(), g.precision);
    if (it == precisions.end()) continue;
    const GemmPoint point{g.shape, static_cast<int>(it - precisions.begin()), g.time.median_s};
    (g.time.disturbed_only ? disturbed : fits.input.points).push_back(point);
  }
  const std::size_t needed = precisions.size() + 4 + 4;
  if (fits.input.points.size() < needed) {
    fits.input.points.insert(fits.input.points.end(), disturbed.begin(), disturbed.end());
    disturbed.clear();
  }
  fits.excluded_disturbed = static_cast<int>(disturbed.size());
  fits.result = fit_gemm_model(fits.input);
  return fits;
}

bool is_node_precision(const std::string& backend, const std::string& precision) {
  if (backend == "cpu") return precision == "fp32";
  return precision == "fp16" || precision == "bf16" || precision == "fp8";
}

double element_bytes(const std::string& precision) {
  if (precision == "fp64") return 8.0;
  if (precision == "fp32") return 4.0;
  if (precision == "fp8") return 1.0;
  return 2.0;
}

Json build_profile(const RawProfile& raw, const ProfileOptions& options,
                   const ProfileContext& context) {
  const bool cpu = raw.device.backend == "cpu";
  const Figures figure(raw.host.hostname, context.created_utc);
  Json fits_json = Json::object();

  // --- memory bandwidth: the copy kernel; its share of a known peak on GPUs ---
  const MemoryBoundRecord* copy = find_kernel(raw, "copy");
  PARPLAN_CHECK(copy != nullptr, "the profile needs the memory bandwidth (copy) measurement");
  const double copy_gbps = copy->gbps();
  double hbm_gbps = copy_gbps;
  double hbm_efficiency = 1.0;
  std::string hbm_source = "copy kernel over " + format(copy->bytes / 2 / 1048576.0, 4) +
                           " MiB buffers, median of " + std::to_string(copy->time.count) +
                           " samples, every rank at once";
  Json hbm_figure = figure.measured(hbm_gbps, hbm_source);
  Json hbm_efficiency_figure =
      figure.measured(1.0, "the bandwidth above is the achieved one (efficiency 1)");
  if (!cpu && raw.device.peak_memory_gbps > 0 && copy_gbps <= raw.device.peak_memory_gbps) {
    hbm_gbps = raw.device.peak_memory_gbps;
    hbm_efficiency = copy_gbps / hbm_gbps;
    hbm_figure = figure.derived(hbm_gbps, raw.device.peak_memory_source);
    hbm_efficiency_figure = figure.measured(
        hbm_efficiency, "copy kernel " + format(copy_gbps, 4) + " GB/s of the peak; " + hbm_source);
  }
  fits_json["memory"] = {{"copy_gbps", copy_gbps}};
  if (const auto* triad = find_kernel(raw, "triad"))
    fits_json["memory"]["triad_gbps"] = triad->gbps();

  // --- GEMM model: node precisions jointly; others (fp64 on CPUs) on their own ---
  std::vector<std::string> node_precisions;
  std::vector<std::string> other_precisions;
  for (const auto& g : raw.gemm) {
    auto& list =
        is_node_precision(raw.device.backend, g.precision) ? node_precisions : other_precisions;
    if (std::find(list.begin(), list.end(), g.precision) == list.end()) list.push_back(g.precision);
  }
  PARPLAN_CHECK(!node_precisions.empty(), "the profile needs GEMM measurements at ",
                cpu ? "fp32" : "fp16, bf16 or fp8", " for the node's GEMM model");
  const GemmFits node_fit = fit_gemms(raw, node_precisions, hbm_gbps * hbm_efficiency);
  fits_json["gemm"] = Json::object();
  fits_json["gemm"]["node"] = gemm_fit_json(node_fit, raw);
  Json notes = Json::array();
  for (const auto& p : other_precisions) {
    const GemmFits extra = fit_gemms(raw, {p}, hbm_gbps * hbm_efficiency);
    fits_json["gemm"][p] = gemm_fit_json(extra, raw);
    notes.push_back(p + " GEMM: asymptotic " + format(extra.result.model.throughput_tflops[0], 4) +
                    " TFLOP/s, m/n/k_half " + format(extra.result.model.m_half, 3) + "/" +
                    format(extra.result.model.n_half, 3) + "/" +
                    format(extra.result.model.k_half, 3) + ", launch " +
                    format(extra.result.model.launch_us, 3) + " us (profile fits.gemm." + p +
                    "); the node's figures are " + node_precisions.front() + "'s");
  }
  const std::string gemm_detail = "fit of the GEMM model (core/gemm_efficiency.h) to " +
                                  std::to_string(node_fit.result.points) + " shapes, rms error " +
                                  percent(node_fit.result.rms_relative_error);
  Json dense = Json::object();
  Json efficiency = Json::object();
  for (std::size_t i = 0; i < node_precisions.size(); ++i) {
    const std::string& p = node_precisions[i];
    const double asymptote = node_fit.result.model.throughput_tflops[i];
    const auto peak_it = raw.device.peak_tflops.find(p);
    const double peak = peak_it != raw.device.peak_tflops.end() ? peak_it->second : 0.0;
    if (peak > 0 && asymptote <= peak) {
      dense[p] = figure.derived(peak, raw.device.peak_source);
      efficiency[p] = figure.measured(asymptote / peak, "asymptotic " + format(asymptote, 4) +
                                                            " TFLOP/s of the peak; " + gemm_detail);
    } else {
      dense[p] = figure.measured(
          asymptote, "asymptotic throughput, " + gemm_detail +
                         (cpu ? "; a CPU's peak is taken as this" : "; no known peak below it"));
      efficiency[p] = figure.measured(1.0, "the peak above is the achieved asymptote");
    }
  }
  for (const auto& [p, peak] : raw.device.peak_tflops) {
    if (!dense.contains(p) && p != "fp64" && peak > 0)
      dense[p] = figure.derived(peak, raw.device.peak_source);
  }

  // --- collectives ---
  const std::vector<CollectiveFit> collective_fits = fit_collectives(raw.collectives);
  int excluded_collectives = 0;
  for (const auto& c : raw.collectives) excluded_collectives += c.time.disturbed_only ? 1 : 0;
  Json fit_list = Json::array();
  for (const auto& f : collective_fits) {
    fit_list.push_back({{"op", f.op},
                        {"span", f.span},
                        {"group_size", f.group_size},
                        {"latency_us", f.latency_us},
                        {"busbw_gbps", f.busbw_gbps},
                        {"min_size_bytes", f.min_size_bytes},
                        {"max_size_bytes", f.max_size_bytes},
                        {"rms_relative_error", f.rms_relative_error},
                        {"source", "least-squares fit (relative error) of the measured sizes"}});
  }
  fits_json["collectives"] = fit_list;
  fits_json["collectives_disturbed_only_sizes"] = excluded_collectives;
  const SpanFigures intra = span_figures(collective_fits, "intra_node");
  const SpanFigures inter = span_figures(collective_fits, "inter_node");

  Json intra_json = {{"fabric", "switch"}};
  if (intra.measured) {
    const std::string detail = "all_reduce over groups of " + std::to_string(intra.group_size);
    intra_json["link_bandwidth_gbps"] =
        figure.measured(intra.busbw_gbps, detail + ", busbw fitted for sizes from " +
                                              format(intra.large_size_bytes, 4) + " bytes");
    intra_json["busbw_efficiency"] =
        figure.measured(1.0, "the link bandwidth is the measured busbw");
    intra_json["latency_us"] =
        figure.measured(intra.latency_us, detail + ", fitted latency of the smallest sizes");
  } else {
    intra_json["link_bandwidth_gbps"] = figure.measured(
        copy_gbps,
        "NOT an intra-node collective measurement (one rank per host): the memory "
        "copy bandwidth stands in; apply_profile keeps a preset's intra-node figures");
    intra_json["busbw_efficiency"] = figure.measured(1.0, "stand-in, see link_bandwidth_gbps");
  }
  Json inter_json;
  if (inter.measured) {
    const std::string detail =
        "all_reduce over groups of " + std::to_string(inter.group_size) + " across hosts";
    inter_json["nics_per_node"] = figure.derived(
        raw.ranks_per_host,
        "one network path per rank (ranks per host), the network's count is not measured");
    inter_json["nic_gbit_per_s"] =
        figure.measured(inter.busbw_gbps * 8.0, detail + ": busbw x 8 (Gb/s)");
    inter_json["nic_busbw_efficiency"] =
        figure.measured(1.0, "the rate above is the measured busbw");
    inter_json["latency_us"] =
        figure.measured(inter.latency_us, detail + ", fitted latency of the smallest sizes");
  } else {
    inter_json["nics_per_node"] = figure.derived(0, "not measured: the run had one host");
    inter_json["nic_gbit_per_s"] = figure.derived(0, "not measured: the run had one host");
  }

  Json gpu = {
      {"name", raw.device.name},
      {"vendor", raw.device.vendor},
      {"architecture", raw.device.architecture.empty() ? "other" : raw.device.architecture},
      {"memory_gib",
       figure.derived(raw.device.memory_gib, cpu ? "host memory (MemTotal) / ranks on the host"
                                                 : "device memory reported by the CUDA runtime")},
      {"hbm_bandwidth_gbps", hbm_figure},
      {"hbm_efficiency", hbm_efficiency_figure},
      {"sustained_clock_fraction",
       figure.measured(1.0, cpu ? "the throughput above is what the profile sustained"
                                : "the throughput above is of short bursts (profile samples); "
                                  "apply_profile keeps a preset's sustained-clock figure")},
      {"dense_tflops", dense},
      {"matmul_efficiency", efficiency},
      {"sm_count", figure.derived(static_cast<double>(raw.device.sm_count),
                                  cpu ? "CPU: 0 turns wave quantisation off"
                                      : "multiprocessor count reported by the CUDA runtime")},
      {"kernel_launch_us",
       figure.measured(node_fit.result.model.launch_us,
                       gemm_detail + (node_fit.result.launch_bound_points == 0
                                          ? "; no measured GEMM was launch-bound, so this is "
                                            "only an upper bound"
                                          : ""))},
      {"gemm_m_half", figure.measured(node_fit.result.model.m_half, gemm_detail)},
      {"gemm_n_half", figure.measured(node_fit.result.model.n_half, gemm_detail)},
      {"gemm_k_half", figure.measured(node_fit.result.model.k_half, gemm_detail)}};
  // The profiled program's kernels (ProfileOptions::kernel_probes): memory-bound ones as
  // GB/s per kernel (the largest size measured), attention as TFLOP/s.
  Json kernel_gbps = Json::object();
  Json attention = Json::object();
  std::map<std::string, const MemoryBoundRecord*> largest;
  for (const auto& m : raw.memory_bound) {
    if (!m.probe || m.time.disturbed_only) continue;
    const MemoryBoundRecord*& best = largest[m.kernel];
    if (best == nullptr || m.rows * m.cols > best->rows * best->cols) best = &m;
  }
  for (const auto& [kernel, m] : largest) {
    const std::string where = std::to_string(m->rows) + " x " + std::to_string(m->cols);
    if (m->flops > 0) {
      const std::string key = kernel == "attention_backward" ? "backward" : "forward";
      attention[key] = figure.measured(m->flops / m->time.median_s / 1e12,
                                       kernel + " at " + where + " (full score matrix)");
    } else if (m->bytes > 0) {
      kernel_gbps[kernel] = figure.measured(m->gbps(), kernel + " at " + where);
    }
  }
  if (!kernel_gbps.empty()) gpu["kernel_gbps"] = kernel_gbps;
  if (!attention.empty()) gpu["attention_tflops"] = attention;

  if (raw.device.l2_cache_mib > 0) {
    gpu["l2_cache_mib"] = figure.derived(raw.device.l2_cache_mib, raw.device.l2_cache_source);
  }
  if (!notes.empty()) gpu["notes"] = notes;

  const std::string where = raw.host.hostname + " at " + context.created_utc;
  Json node = {
      {"name", "measured-" + raw.host.hostname + "-" + raw.device.backend},
      {"description", "measured by parplan profile on " + where + " (backend " +
                          raw.device.backend + ", " + count_of(raw.ranks, "rank") + " on " +
                          count_of(raw.hosts, "host") + "): " + raw.device.name},
      {"gpus_per_node", figure.derived(raw.ranks_per_host, "ranks per host in the profiling run")},
      {"gpu", gpu},
      {"intra_node", intra_json},
      {"inter_node", inter_json},
      {"collective_fits", fit_list}};

  std::set<std::string> spans;
  std::set<std::string> ops;
  std::set<int64_t> group_sizes;
  for (const auto& c : raw.collectives) {
    spans.insert(c.span);
    ops.insert(to_string(c.op));
    group_sizes.insert(c.group_size);
  }
  std::vector<std::string> precisions = node_precisions;
  precisions.insert(precisions.end(), other_precisions.begin(), other_precisions.end());
  Json software = Json::object();
  for (const auto& [k, v] : raw.device.software) software[k] = v;
  Json device = {{"name", raw.device.name},        {"vendor", raw.device.vendor},
                 {"backend", raw.device.backend},  {"memory_gib", raw.device.memory_gib},
                 {"per_host", raw.ranks_per_host}, {"software", software}};
  if (raw.device.compute_capability > 0)
    device["compute_capability"] = raw.device.compute_capability;
  Json doc = {{"schema", std::string(kProfileSchema)},
              {"created_utc", context.created_utc},
              {"generator", context.generator},
              {"host",
               {{"hostname", raw.host.hostname},
                {"cpu_model", raw.host.cpu_model},
                {"cores", raw.host.cores},
                {"memory_gib", raw.host.memory_gib}}},
              {"device", device},
              {"coverage",
               {{"ranks", raw.ranks},
                {"hosts", raw.hosts},
                {"ranks_per_host", raw.ranks_per_host},
                {"quick", options.quick},
                {"elapsed_s", context.elapsed_s},
                {"gemm_precisions", precisions},
                {"collective_spans", spans},
                {"collective_ops", ops},
                {"collective_group_sizes", group_sizes}}},
              {"node", node},
              {"fits", fits_json},
              {"measurements", measurements_json(raw)},
              {"warnings", raw.warnings}};
  // The document must read back with the strict reader (and its node as a node preset).
  parse_hardware_profile(doc, "<profile being written>");
  return doc;
}

}  // namespace parplan::profiler
