#include "profiler/profile_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/check.h"
#include "core/hardware_profile.h"
#include "core/plural.h"
#include "core/units.h"
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
      r["tflops"] = m.flops / m.time.median_s / kTera;
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

namespace {

// The memory bandwidth: the copy kernel, as the share of a known peak on GPUs.
struct MemoryFigures {
  double copy_gbps = 0;
  double hbm_gbps = 0;
  double hbm_efficiency = 1.0;
  Json hbm_figure;
  Json hbm_efficiency_figure;
  double effective_gbps() const { return hbm_gbps * hbm_efficiency; }
};

MemoryFigures memory_figures(const RawProfile& raw, const Figures& figure) {
  const MemoryBoundRecord* copy = find_kernel(raw, "copy");
  PARPLAN_CHECK(copy != nullptr, "the profile needs the memory bandwidth (copy) measurement");
  MemoryFigures m;
  m.copy_gbps = copy->gbps();
  m.hbm_gbps = m.copy_gbps;
  const std::string source = "copy kernel over " + format(copy->bytes / 2 / kMiB, 4) +
                             " MiB buffers, median of " + std::to_string(copy->time.count) +
                             " samples, every rank at once";
  m.hbm_figure = figure.measured(m.hbm_gbps, source);
  m.hbm_efficiency_figure =
      figure.measured(1.0, "the bandwidth above is the achieved one (efficiency 1)");
  const bool cpu = raw.device.backend == "cpu";
  if (!cpu && raw.device.peak_memory_gbps > 0 && m.copy_gbps <= raw.device.peak_memory_gbps) {
    m.hbm_gbps = raw.device.peak_memory_gbps;
    m.hbm_efficiency = m.copy_gbps / m.hbm_gbps;
    m.hbm_figure = figure.derived(m.hbm_gbps, raw.device.peak_memory_source);
    m.hbm_efficiency_figure = figure.measured(
        m.hbm_efficiency, "copy kernel " + format(m.copy_gbps, 4) + " GB/s of the peak; " + source);
  }
  return m;
}

Json memory_fits_json(const RawProfile& raw, const MemoryFigures& memory) {
  Json out = {{"copy_gbps", memory.copy_gbps}};
  if (const auto* triad = find_kernel(raw, "triad")) out["triad_gbps"] = triad->gbps();
  return out;
}

// The GEMM model: the node's precisions fitted jointly, the others (fp64 on CPUs) each alone.
struct GemmSection {
  std::vector<std::string> node_precisions;
  std::vector<std::string> other_precisions;
  GemmFits node_fit;
  std::string detail;  // how the node's figures were fitted, for their sources
  Json fits = Json::object();
  Json notes = Json::array();
  Json dense = Json::object();
  Json efficiency = Json::object();
  Json ramps = Json::object();  // a precision's own *_half ramps (gpu.gemm_ramps)
};

void split_gemm_precisions(const RawProfile& raw, GemmSection& g) {
  for (const auto& gemm : raw.gemm) {
    auto& list = is_node_precision(raw.device.backend, gemm.precision) ? g.node_precisions
                                                                       : g.other_precisions;
    if (std::find(list.begin(), list.end(), gemm.precision) == list.end())
      list.push_back(gemm.precision);
  }
  PARPLAN_CHECK(!g.node_precisions.empty(), "the profile needs GEMM measurements at ",
                raw.device.backend == "cpu" ? "fp32" : "fp16, bf16 or fp8",
                " for the node's GEMM model");
}

// Precision p's dense peak and matmul efficiency from its fitted asymptote: a known peak with
// the asymptote's share of it, or the asymptote itself as the peak.
void peak_and_efficiency(const RawProfile& raw, const Figures& figure, const std::string& p,
                         double asymptote, const std::string& detail, GemmSection& g) {
  const bool cpu = raw.device.backend == "cpu";
  const auto peak_it = raw.device.peak_tflops.find(p);
  const double peak = peak_it != raw.device.peak_tflops.end() ? peak_it->second : 0.0;
  if (peak > 0 && asymptote <= peak) {
    g.dense[p] = figure.derived(peak, raw.device.peak_source);
    g.efficiency[p] = figure.measured(
        asymptote / peak, "asymptotic " + format(asymptote, 4) + " TFLOP/s of the peak; " + detail);
  } else {
    g.dense[p] = figure.measured(
        asymptote, "asymptotic throughput, " + detail +
                       (cpu ? "; a CPU's peak is taken as this" : "; no known peak below it"));
    g.efficiency[p] = figure.measured(1.0, "the peak above is the achieved asymptote");
  }
}

// A GPU's fp32 GEMMs (the executor's cuBLAS fp32 math on the CUDA cores) fill the machine
// unlike its tensor-core GEMMs: their own fit gives the node's fp32 peak share and ramps.
void own_precision_figures(const RawProfile& raw, const Figures& figure, const std::string& p,
                           const GemmFits& fit, GemmSection& g) {
  const GemmModel& model = fit.result.model;
  const std::string detail = "fit of the GEMM model (core/gemm_efficiency.h) to " +
                             std::to_string(fit.result.points) + " " + p + " shapes alone, rms " +
                             percent(fit.result.rms_relative_error);
  peak_and_efficiency(raw, figure, p, model.throughput_tflops[0], detail, g);
  g.ramps[p] = {{"m_half", figure.measured(model.m_half, detail)},
                {"n_half", figure.measured(model.n_half, detail)},
                {"k_half", figure.measured(model.k_half, detail)}};
}

void fit_other_precisions(const RawProfile& raw, const Figures& figure, double bandwidth_gbps,
                          GemmSection& g) {
  for (const auto& p : g.other_precisions) {
    const GemmFits extra = fit_gemms(raw, {p}, bandwidth_gbps);
    g.fits[p] = gemm_fit_json(extra, raw);
    const bool own = raw.device.backend != "cpu" && parse_precision(p).has_value();
    if (own) own_precision_figures(raw, figure, p, extra, g);
    const GemmModel& model = extra.result.model;
    g.notes.push_back(p + " GEMM: asymptotic " + format(model.throughput_tflops[0], 4) +
                      " TFLOP/s, m/n/k_half " + format(model.m_half, 3) + "/" +
                      format(model.n_half, 3) + "/" + format(model.k_half, 3) + ", launch " +
                      format(model.launch_us, 3) + " us (profile fits.gemm." + p + "); " +
                      (own ? "the node's " + p +
                                 " figures (dense_tflops, matmul_efficiency, "
                                 "gemm_ramps) are this fit's"
                           : "the node's figures are " + g.node_precisions.front() + "'s"));
  }
}

// Each node precision's dense peak and matmul efficiency (the joint fit's asymptotes), and
// the device's known peaks of the precisions not measured.
void peak_figures(const RawProfile& raw, const Figures& figure, GemmSection& g) {
  for (std::size_t i = 0; i < g.node_precisions.size(); ++i) {
    peak_and_efficiency(raw, figure, g.node_precisions[i],
                        g.node_fit.result.model.throughput_tflops[i], g.detail, g);
  }
  for (const auto& [p, peak] : raw.device.peak_tflops) {
    if (!g.dense.contains(p) && p != "fp64" && peak > 0)
      g.dense[p] = figure.derived(peak, raw.device.peak_source);
  }
}

GemmSection gemm_section(const RawProfile& raw, const Figures& figure, double bandwidth_gbps) {
  GemmSection g;
  split_gemm_precisions(raw, g);
  g.node_fit = fit_gemms(raw, g.node_precisions, bandwidth_gbps);
  g.fits["node"] = gemm_fit_json(g.node_fit, raw);
  fit_other_precisions(raw, figure, bandwidth_gbps, g);
  g.detail = "fit of the GEMM model (core/gemm_efficiency.h) to " +
             std::to_string(g.node_fit.result.points) + " shapes, rms error " +
             percent(g.node_fit.result.rms_relative_error);
  peak_figures(raw, figure, g);
  return g;
}

// The collectives: every fit, and the node's intra- and inter-node figures from the all-reduce
// over the largest group of each span.
struct CollectiveSection {
  Json fit_list = Json::array();
  int excluded_disturbed = 0;
  Json intra;
  Json inter;
};

Json intra_node_json(const SpanFigures& intra, const Figures& figure, double copy_gbps) {
  Json out = {{"fabric", "switch"}};
  if (!intra.measured) {
    out["link_bandwidth_gbps"] = figure.measured(
        copy_gbps,
        "NOT an intra-node collective measurement (one rank per host): the memory "
        "copy bandwidth stands in; apply_profile keeps a preset's intra-node figures");
    out["busbw_efficiency"] = figure.measured(1.0, "stand-in, see link_bandwidth_gbps");
    return out;
  }
  const std::string detail = "all_reduce over groups of " + std::to_string(intra.group_size);
  out["link_bandwidth_gbps"] =
      figure.measured(intra.busbw_gbps, detail + ", busbw fitted for sizes from " +
                                            format(intra.large_size_bytes, 4) + " bytes");
  out["busbw_efficiency"] = figure.measured(1.0, "the link bandwidth is the measured busbw");
  out["latency_us"] =
      figure.measured(intra.latency_us, detail + ", fitted latency of the smallest sizes");
  return out;
}

Json inter_node_json(const SpanFigures& inter, const Figures& figure, int64_t ranks_per_host) {
  Json out;
  if (!inter.measured) {
    out["nics_per_node"] = figure.derived(0, "not measured: the run had one host");
    out["nic_gbit_per_s"] = figure.derived(0, "not measured: the run had one host");
    return out;
  }
  const std::string detail =
      "all_reduce over groups of " + std::to_string(inter.group_size) + " across hosts";
  out["nics_per_node"] = figure.derived(
      ranks_per_host,
      "one network path per rank (ranks per host), the network's count is not measured");
  out["nic_gbit_per_s"] = figure.measured(inter.busbw_gbps * 8.0, detail + ": busbw x 8 (Gb/s)");
  out["nic_busbw_efficiency"] = figure.measured(1.0, "the rate above is the measured busbw");
  out["latency_us"] =
      figure.measured(inter.latency_us, detail + ", fitted latency of the smallest sizes");
  return out;
}

CollectiveSection collective_section(const RawProfile& raw, const Figures& figure,
                                     double copy_gbps) {
  CollectiveSection c;
  const std::vector<CollectiveFit> fits = fit_collectives(raw.collectives);
  for (const auto& r : raw.collectives) c.excluded_disturbed += r.time.disturbed_only ? 1 : 0;
  for (const auto& f : fits) {
    c.fit_list.push_back({{"op", f.op},
                          {"span", f.span},
                          {"group_size", f.group_size},
                          {"latency_us", f.latency_us},
                          {"busbw_gbps", f.busbw_gbps},
                          {"min_size_bytes", f.min_size_bytes},
                          {"max_size_bytes", f.max_size_bytes},
                          {"rms_relative_error", f.rms_relative_error},
                          {"source", "least-squares fit (relative error) of the measured sizes"}});
  }
  c.intra = intra_node_json(span_figures(fits, "intra_node"), figure, copy_gbps);
  c.inter = inter_node_json(span_figures(fits, "inter_node"), figure, raw.ranks_per_host);
  return c;
}

// The profiled program's kernels (ProfileOptions::kernel_probes): memory-bound ones as GB/s
// per kernel (the largest size measured), attention as TFLOP/s.
void add_kernel_probes(const RawProfile& raw, const Figures& figure, Json& gpu) {
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
      attention[key] = figure.measured(m->flops / m->time.median_s / kTera,
                                       kernel + " at " + where + " (full score matrix)");
    } else if (m->bytes > 0) {
      kernel_gbps[kernel] = figure.measured(m->gbps(), kernel + " at " + where);
    }
  }
  if (!kernel_gbps.empty()) gpu["kernel_gbps"] = kernel_gbps;
  if (!attention.empty()) gpu["attention_tflops"] = attention;
  // A GPU's program kernels are the executor's fp32 ones: they describe fp32 jobs only (a
  // CPU profile's describe the CPU executor, which computes fp32 for every job).
  if (raw.device.backend != "cpu" && (!kernel_gbps.empty() || !attention.empty())) {
    gpu["kernel_figures_precision"] = largest.begin()->second->precision;
  }
}

Json gpu_json(const RawProfile& raw, const Figures& figure, const MemoryFigures& memory,
              const GemmSection& gemm) {
  const bool cpu = raw.device.backend == "cpu";
  const GemmModel& model = gemm.node_fit.result.model;
  Json gpu = {
      {"name", raw.device.name},
      {"vendor", raw.device.vendor},
      {"architecture", raw.device.architecture.empty() ? "other" : raw.device.architecture},
      {"memory_gib",
       figure.derived(raw.device.memory_gib, cpu ? "host memory (MemTotal) / ranks on the host"
                                                 : "device memory reported by the CUDA runtime")},
      {"hbm_bandwidth_gbps", memory.hbm_figure},
      {"hbm_efficiency", memory.hbm_efficiency_figure},
      {"sustained_clock_fraction",
       figure.measured(1.0, cpu ? "the throughput above is what the profile sustained"
                                : "the throughput above is of short bursts (profile samples); "
                                  "apply_profile keeps a preset's sustained-clock figure")},
      {"dense_tflops", gemm.dense},
      {"matmul_efficiency", gemm.efficiency},
      {"sm_count", figure.derived(static_cast<double>(raw.device.sm_count),
                                  cpu ? "CPU: 0 turns wave quantisation off"
                                      : "multiprocessor count reported by the CUDA runtime")},
      {"kernel_launch_us",
       figure.measured(model.launch_us, gemm.detail + (gemm.node_fit.result.launch_bound_points == 0
                                                           ? "; no measured GEMM was launch-bound, "
                                                             "so this is only an upper bound"
                                                           : ""))},
      {"gemm_m_half", figure.measured(model.m_half, gemm.detail)},
      {"gemm_n_half", figure.measured(model.n_half, gemm.detail)},
      {"gemm_k_half", figure.measured(model.k_half, gemm.detail)}};
  add_kernel_probes(raw, figure, gpu);
  if (!gemm.ramps.empty()) gpu["gemm_ramps"] = gemm.ramps;
  if (raw.device.l2_cache_mib > 0) {
    gpu["l2_cache_mib"] = figure.derived(raw.device.l2_cache_mib, raw.device.l2_cache_source);
  }
  if (!gemm.notes.empty()) gpu["notes"] = gemm.notes;
  return gpu;
}

Json node_json(const RawProfile& raw, const ProfileContext& context, const Figures& figure,
               Json gpu, const CollectiveSection& collectives) {
  const std::string where = raw.host.hostname + " at " + context.created_utc;
  return {
      {"name", "measured-" + raw.host.hostname + "-" + raw.device.backend},
      {"description", "measured by parplan profile on " + where + " (backend " +
                          raw.device.backend + ", " + count_of(raw.ranks, "rank") + " on " +
                          count_of(raw.hosts, "host") + "): " + raw.device.name},
      {"gpus_per_node", figure.derived(raw.ranks_per_host, "ranks per host in the profiling run")},
      {"host_cpu_vendor", raw.host.cpu_vendor},
      {"gpu", std::move(gpu)},
      {"intra_node", collectives.intra},
      {"inter_node", collectives.inter},
      {"collective_fits", collectives.fit_list}};
}

Json device_json(const RawProfile& raw) {
  Json software = Json::object();
  for (const auto& [k, v] : raw.device.software) software[k] = v;
  Json device = {{"name", raw.device.name},        {"vendor", raw.device.vendor},
                 {"backend", raw.device.backend},  {"memory_gib", raw.device.memory_gib},
                 {"per_host", raw.ranks_per_host}, {"software", software}};
  if (raw.device.compute_capability > 0)
    device["compute_capability"] = raw.device.compute_capability;
  return device;
}

// What the run covered: ranks and hosts, GEMM precisions, collective spans, ops and groups.
Json coverage_json(const RawProfile& raw, const ProfileOptions& options,
                   const ProfileContext& context, const GemmSection& gemm) {
  std::set<std::string> spans;
  std::set<std::string> ops;
  std::set<int64_t> group_sizes;
  for (const auto& c : raw.collectives) {
    spans.insert(c.span);
    ops.insert(to_string(c.op));
    group_sizes.insert(c.group_size);
  }
  std::vector<std::string> precisions = gemm.node_precisions;
  precisions.insert(precisions.end(), gemm.other_precisions.begin(), gemm.other_precisions.end());
  return {{"ranks", raw.ranks},
          {"hosts", raw.hosts},
          {"ranks_per_host", raw.ranks_per_host},
          {"quick", options.quick},
          {"elapsed_s", context.elapsed_s},
          {"gemm_precisions", precisions},
          {"collective_spans", spans},
          {"collective_ops", ops},
          {"collective_group_sizes", group_sizes}};
}

}  // namespace

Json build_profile(const RawProfile& raw, const ProfileOptions& options,
                   const ProfileContext& context) {
  const Figures figure(raw.host.hostname, context.created_utc);
  const MemoryFigures memory = memory_figures(raw, figure);
  const GemmSection gemm = gemm_section(raw, figure, memory.effective_gbps());
  const CollectiveSection collectives = collective_section(raw, figure, memory.copy_gbps);
  Json fits = {{"memory", memory_fits_json(raw, memory)},
               {"gemm", gemm.fits},
               {"collectives", collectives.fit_list},
               {"collectives_disturbed_only_sizes", collectives.excluded_disturbed}};
  Json doc = {
      {"schema", std::string(kProfileSchema)},
      {"created_utc", context.created_utc},
      {"generator", context.generator},
      {"host",
       {{"hostname", raw.host.hostname},
        {"cpu_model", raw.host.cpu_model},
        {"cpu_vendor", raw.host.cpu_vendor},
        {"cores", raw.host.cores},
        {"memory_gib", raw.host.memory_gib}}},
      {"device", device_json(raw)},
      {"coverage", coverage_json(raw, options, context, gemm)},
      {"node", node_json(raw, context, figure, gpu_json(raw, figure, memory, gemm), collectives)},
      {"fits", fits},
      {"measurements", measurements_json(raw)},
      {"warnings", raw.warnings}};
  // The document must read back with the strict reader (and its node as a node preset).
  parse_hardware_profile(doc, "<profile being written>");
  return doc;
}

}  // namespace parplan::profiler
