#include "profiler/cpu_backend.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/units.h"
#include "profiler/cpu_reference_kernels.h"
#include "profiler/cpu_timing.h"
#include "profiler/gemm_shapes.h"
#include "profiler/host_info.h"

namespace parplan::profiler {

namespace {

// The operands of one GEMM shape; run() computes c = a * b (`batch` times over the same
// operands for a batched shape).
class GemmOperands {
 public:
  virtual ~GemmOperands() = default;
  virtual void run() = 0;
  virtual bool finite() const = 0;
};

template <typename Scalar>
class EigenGemm final : public GemmOperands {
 public:
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  explicit EigenGemm(const GemmShape& s)
      : shape_(s), a_(Matrix::Random(s.m, s.k)), b_(Matrix::Random(s.k, s.n)), c_(s.m, s.n) {}
  void run() override {
    for (int64_t i = 0; i < shape_.batch; ++i) c_.noalias() = a_ * b_;
  }
  bool finite() const override { return std::isfinite(static_cast<double>(c_.sum())); }

 private:
  GemmShape shape_;
  Matrix a_, b_, c_;
};

std::unique_ptr<GemmOperands> make_gemm(const GemmShape& shape, const std::string& precision) {
  if (precision == "fp32") return std::make_unique<EigenGemm<float>>(shape);
  if (precision == "fp64") return std::make_unique<EigenGemm<double>>(shape);
  throw InputError("", "--gemm-precisions", "\"" + precision + "\"",
                   "fp32 or fp64 for the cpu backend");
}

double operand_bytes(const GemmShape& s, const std::string& precision) {
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n);
  const double k = static_cast<double>(s.k);
  return (m * k + k * n + m * n) * (precision == "fp64" ? 8.0 : 4.0);
}

void report(const ProfileOptions& options, ProcessGroup& group, const std::string& line) {
  if (group.is_root() && options.progress) options.progress(line);
}

// The fp64 list under --quick: the cheaper shapes (at least 8, enough for the fit).
std::vector<GemmShape> fp64_quick_subset(const std::vector<GemmShape>& shapes) {
  std::vector<GemmShape> out;
  for (const auto& s : shapes) {
    if (gemm_flops(s) <= 1.5e8) out.push_back(s);
  }
  for (std::size_t i = out.size(); i < std::min<std::size_t>(8, shapes.size()); ++i) {
    out.push_back(shapes[i]);
  }
  return out;
}

class CpuBackend final : public Backend {
 public:
  CpuBackend(std::unique_ptr<CollectiveBenchmark> collectives,
             std::map<std::string, std::string> software)
      : collectives_(std::move(collectives)), software_(std::move(software)) {}

  std::string name() const override { return "cpu"; }

  RawProfile run(ProcessGroup& group, const ProfileOptions& options) override {
    RawProfile raw;
    raw.ranks = group.size();
    raw.hosts = group.num_hosts();
    raw.ranks_per_host = group.local_size();
    describe(group, raw);
    if (options.measure_gemm) measure_gemms(group, options, raw);
    if (options.measure_memory) measure_memory(group, options, raw);
    if (options.measure_collectives) {
      if (group.size() < 2) {
        raw.warnings.push_back(
            "one rank: no collectives measured (run under mpirun -np N for collectives)");
      } else if (!collectives_) {
        raw.warnings.push_back("this build has no MPI: no collectives measured");
      } else {
        report(options, group, "collectives (" + collectives_->name() + ")");
        raw.collectives = collectives_->run(group, options, raw.warnings);
      }
    }
    return raw;
  }

 private:
  void describe(ProcessGroup& group, RawProfile& raw) {
    raw.host.hostname = host_name();
    raw.host.cpu_model = cpu_model_name();
    raw.host.cpu_vendor = cpu_vendor();
    raw.host.cores = cpu_core_count();
    raw.host.memory_gib = host_memory_bytes() / kGiB;
    DeviceInfo& d = raw.device;
    d.name = raw.host.cpu_model;
    d.vendor = "cpu";
    d.architecture = "cpu";
    d.backend = "cpu";
    d.memory_gib = raw.host.memory_gib / std::max(1, group.local_size());
    d.sm_count = 0;
    d.l2_cache_mib = last_level_cache_bytes(&d.l2_cache_source) / kMiB;
    d.software = software_;
    d.software["eigen"] = std::to_string(EIGEN_WORLD_VERSION) + "." +
                          std::to_string(EIGEN_MAJOR_VERSION) + "." +
                          std::to_string(EIGEN_MINOR_VERSION);
    d.software["eigen_simd"] = Eigen::SimdInstructionSetsInUse();
    d.software["eigen_threads"] = std::to_string(Eigen::nbThreads());
    const std::string mpi = group.mpi_version();
    if (!mpi.empty()) d.software["mpi"] = mpi;
  }

  void measure_gemms(ProcessGroup& group, const ProfileOptions& options, RawProfile& raw) {
    const std::vector<GemmShape> shapes =
        options.gemm_shapes.empty() ? cpu_gemm_shapes(options.quick) : options.gemm_shapes;
    std::vector<std::string> precisions = options.gemm_precisions;
    if (precisions.empty()) precisions = {"fp32", "fp64"};
    for (const auto& precision : precisions) {
      const auto list = precision == "fp64" && options.quick && options.gemm_shapes.empty()
                            ? fp64_quick_subset(shapes)
                            : shapes;
      report(options, group,
             "GEMM " + precision + ": " + std::to_string(list.size()) + " shapes (Eigen)");
      for (auto& record : measure_cpu_gemms(group, list, precision, options)) {
        if (!record.time.converged) {
          raw.warnings.push_back("GEMM " + precision + " " + to_string(record.shape) + ": " +
                                 profiler::describe(record.time));
        }
        raw.gemm.push_back(std::move(record));
      }
    }
  }

  void measure_memory(ProcessGroup& group, const ProfileOptions& options, RawProfile& raw) {
    // Arrays of 4x the last-level cache (at least 64 MiB, at most 1 GiB), three per rank,
    // within a quarter of the free memory of the host.
    const double llc = raw.device.l2_cache_mib * kMiB;
    double array_bytes = std::clamp(4.0 * llc, 64.0 * kMiB, 1.0 * kGiB);
    const double free_share =
        available_memory_bytes() / 4.0 / 3.0 / std::max(1, group.local_size());
    if (free_share > 0 && array_bytes > free_share) {
      array_bytes = free_share;
      raw.warnings.push_back("memory bandwidth arrays limited to " +
                             std::to_string(static_cast<int64_t>(array_bytes / kMiB)) +
                             " MiB by free memory");
    }
    report(options, group,
           "memory bandwidth (STREAM copy/triad, " +
               std::to_string(static_cast<int64_t>(array_bytes / kMiB)) + " MiB arrays)");
    for (auto& record : measure_cpu_memory_bandwidth(group, options, array_bytes)) {
      raw.memory_bound.push_back(std::move(record));
    }
    // The memory-bound kernels at a cache-resident and a memory-resident size.
    struct Size {
      std::string kernel;
      int64_t rows, cols;
    };
    std::vector<Size> sizes = {{"layernorm", 512, 512}, {"layernorm", 8192, 1024},
                               {"rmsnorm", 512, 512},   {"rmsnorm", 8192, 1024},
                               {"gelu", 512, 2048},     {"gelu", 4096, 4096},
                               {"swiglu", 512, 2048},   {"swiglu", 4096, 4096},
                               {"softmax", 2048, 256},  {"softmax", 8192, 1024}};
    report(options, group, "memory-bound reference kernels: " + std::to_string(sizes.size()));
    for (const auto& s : sizes) {
      MemoryBoundKernel kernel = make_memory_bound_kernel(s.kernel, s.rows, s.cols);
      MemoryBoundRecord record;
      record.kernel = s.kernel;
      record.precision = "fp32";
      record.rows = s.rows;
      record.cols = s.cols;
      record.bytes = kernel.bytes;
      record.time = measure_on_ranks(
          group, [&] { kernel.run(); }, options.stopping, options.target_sample_s);
      raw.memory_bound.push_back(std::move(record));
    }
    if (!options.kernel_probes.empty()) {
      report(options, group, "program kernels: " + std::to_string(options.kernel_probes.size()));
    }
    for (const auto& probe : options.kernel_probes) {
      raw.memory_bound.push_back(probe_record(
          probe, measure_on_ranks(group, probe.run, options.stopping, options.target_sample_s)));
    }
  }

  std::unique_ptr<CollectiveBenchmark> collectives_;
  std::map<std::string, std::string> software_;
};

}  // namespace

std::vector<GemmRecord> measure_cpu_gemms(ProcessGroup& group, const std::vector<GemmShape>& shapes,
                                          const std::string& precision,
                                          const ProfileOptions& options) {
  // Interleaved in chunks whose operands stay within 256 MiB per rank.
  constexpr double kChunkBytes = 256.0 * 1024 * 1024;
  constexpr std::size_t kChunkShapes = 24;
  std::vector<GemmRecord> records;
  std::size_t begin = 0;
  while (begin < shapes.size()) {
    std::size_t end = begin;
    double bytes = 0;
    while (end < shapes.size() && end - begin < kChunkShapes &&
           (end == begin || bytes + operand_bytes(shapes[end], precision) <= kChunkBytes)) {
      bytes += operand_bytes(shapes[end], precision);
      ++end;
    }
    std::vector<std::unique_ptr<GemmOperands>> gemms;
    std::vector<Probe> probes;
    for (std::size_t i = begin; i < end; ++i) {
      gemms.push_back(make_gemm(shapes[i], precision));
      GemmOperands* gemm = gemms.back().get();
      probes.push_back(cpu_probe(
          group, [gemm] { gemm->run(); }, options.stopping, options.target_sample_s));
    }
    const std::vector<Measurement> times = run_interleaved(probes, options.stopping);
    for (std::size_t i = begin; i < end; ++i) {
      PARPLAN_CHECK(gemms[i - begin]->finite(), "Eigen GEMM ", to_string(shapes[i]),
                    " produced a non-finite result");
      records.push_back({shapes[i], precision, times[i - begin]});
    }
    begin = end;
  }
  return records;
}

std::vector<MemoryBoundRecord> measure_cpu_memory_bandwidth(ProcessGroup& group,
                                                            const ProfileOptions& options,
                                                            double array_bytes) {
  const auto n = static_cast<std::size_t>(array_bytes / sizeof(double));
  std::vector<double> a(n, 1.0);
  std::vector<double> b(n, 2.0);
  std::vector<double> c(n, 0.0);
  constexpr double kScalar = 3.0;
  double* pa = a.data();
  double* pb = b.data();
  double* pc = c.data();
  auto copy = [=] {
    for (std::size_t i = 0; i < n; ++i) pc[i] = pa[i];
  };
  auto triad = [=] {
    for (std::size_t i = 0; i < n; ++i) pb[i] = pa[i] + kScalar * pc[i];
  };
  std::vector<MemoryBoundRecord> out;
  const auto rows = static_cast<int64_t>(n);
  const double element = sizeof(double);
  // Triad writes the array copy neither reads nor writes, so that the values stay fixed
  // however the two interleave: c = a = 1, b = a + 3c = 4.
  const std::vector<Measurement> times =
      run_interleaved({cpu_probe(group, copy, options.stopping, options.target_sample_s),
                       cpu_probe(group, triad, options.stopping, options.target_sample_s)},
                      options.stopping);
  out.push_back({"copy", "fp64", rows, 1, 2.0 * element * static_cast<double>(n), times[0]});
  out.push_back({"triad", "fp64", rows, 1, 3.0 * element * static_cast<double>(n), times[1]});
  // STREAM-style check of the values (copy's probe is prepared, and so run, first).
  PARPLAN_CHECK(c[n / 2] == 1.0 && b[n / 2] == 4.0, "STREAM kernels produced wrong values");
  return out;
}

std::unique_ptr<Backend> make_cpu_backend(std::unique_ptr<CollectiveBenchmark> collectives,
                                          std::map<std::string, std::string> software) {
  return std::make_unique<CpuBackend>(std::move(collectives), std::move(software));
}

}  // namespace parplan::profiler
