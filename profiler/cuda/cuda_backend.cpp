#include "profiler/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda/cuda_check.h"
#include "core/gpu_assignment.h"
#include "core/units.h"
#include "profiler/cpu_timing.h"
#include "profiler/cuda/cublaslt_gemm.h"
#include "profiler/cuda/device_kernels.h"
#include "profiler/gemm_shapes.h"
#include "profiler/host_info.h"

namespace parplan::profiler::cuda {

std::string architecture_of(int cc) {
  if (cc >= 100) return "blackwell";
  if (cc >= 90) return "hopper";
  if (cc == 89) return "ada";
  if (cc >= 80) return "ampere";
  if (cc >= 70) return "volta";
  return "other";
}

double dense_flops_per_clock_per_sm(int cc, const std::string& precision) {
  // A100 (sm_80): 312 TF bf16 = 108 SMs x 1.41 GHz x 2048.
  // H100 (sm_90): 989 TF bf16 = 132 SMs x 1.83 GHz x 4096; fp8 twice.
  // L40S / L4 (sm_89): 1024 bf16 with fp32 accumulation, fp8 twice (GeForce parts run fp32
  // accumulation at half rate: their efficiency then reads low, the product stays right).
  // fp32 is cuBLAS's default fp32 math (no TF32: what the executor and PyTorch's default
  // run) on the CUDA cores, one FMA (2 FLOP) per fp32 lane per clock: 64 lanes per SM on
  // sm_80 (A100: 19.5 TF = 108 x 1.41 GHz x 128), 128 on sm_89 and sm_90 (H100 SXM: 67 TF =
  // 132 x 1.98 GHz x 256) (NVIDIA A100, Ada and H100 whitepapers).
  // Other generations: unknown here; the fitted asymptote then stands as the peak.
  const bool fp32 = precision == "fp32";
  const bool fp8 = precision == "fp8";
  if (cc == 80) return fp8 ? 0 : fp32 ? 128 : 2048;
  if (cc == 89) return fp8 ? 2048 : fp32 ? 256 : 1024;
  if (cc == 90) return fp8 ? 8192 : fp32 ? 256 : 4096;
  return 0;
}

namespace {

void report(const ProfileOptions& options, ProcessGroup& group, const std::string& line) {
  if (group.is_root() && options.progress) options.progress(line);
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  PARPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(std::map<std::string, std::string> software,
              std::unique_ptr<CollectiveBenchmark> collectives, KernelTimerFactory timers)
      : software_(std::move(software)), collectives_(std::move(collectives)), timers_(timers) {}

  std::string name() const override { return "cuda"; }

  RawProfile run(ProcessGroup& group, const ProfileOptions& options) override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      (void)cudaGetLastError();
      throw Error("--backend cuda: no CUDA device is visible to rank " +
                  std::to_string(group.rank()));
    }
    device_ = gpu_of_rank(group.local_rank(), devices);
    PARPLAN_CUDA_CHECK(cudaSetDevice(device_));
    PARPLAN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    RawProfile raw;
    raw.ranks = group.size();
    raw.hosts = group.num_hosts();
    raw.ranks_per_host = group.local_size();
    try {
      describe(group, raw);
      // The L2 flush buffer: twice the L2, written between samples.
      flush_bytes_ = std::max<std::size_t>(
          2 * static_cast<std::size_t>(raw.device.l2_cache_mib * kMiB), 64u << 20);
      PARPLAN_CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
      if (options.measure_gemm) measure_gemms(group, options, raw);
      if (options.measure_memory) measure_memory(group, options, raw);
      if (options.device_kernel_probes) measure_program_kernels(group, options, raw);
      cudaFree(flush_);
      flush_ = nullptr;
      if (options.measure_collectives) {
        if (group.size() < 2) {
          raw.warnings.push_back("one rank: no collectives measured (run under mpirun -np N)");
        } else if (!collectives_) {
          raw.warnings.push_back("this build has no NCCL: no collectives measured");
        } else {
          report(options, group, "collectives (" + collectives_->name() + ")");
          raw.collectives = collectives_->run(group, options, raw.warnings);
        }
      }
    } catch (...) {
      cudaFree(flush_);
      cudaStreamDestroy(stream_);
      throw;
    }
    cudaStreamDestroy(stream_);
    return raw;
  }

 private:
  void describe(ProcessGroup& group, RawProfile& raw) {
    raw.host.hostname = host_name();
    raw.host.cpu_model = cpu_model_name();
    raw.host.cpu_vendor = cpu_vendor();
    raw.host.cores = cpu_core_count();
    raw.host.memory_gib = host_memory_bytes() / kGiB;
    cudaDeviceProp prop{};
    PARPLAN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
    DeviceInfo& d = raw.device;
    cc_ = prop.major * 10 + prop.minor;
    d.name = prop.name;
    d.vendor = "nvidia";
    d.backend = "cuda";
    d.architecture = architecture_of(cc_);
    d.compute_capability = cc_;
    d.memory_gib = static_cast<double>(prop.totalGlobalMem) / kGiB;
    d.sm_count = prop.multiProcessorCount;
    d.l2_cache_mib = static_cast<double>(prop.l2CacheSize) / kMiB;
    d.l2_cache_source = "cudaDeviceProp::l2CacheSize";
    const double clock_hz = device_attribute(cudaDevAttrClockRate, device_) * kKilo;
    for (const char* p : {"fp32", "fp16", "bf16", "fp8"}) {
      const double per_sm = dense_flops_per_clock_per_sm(cc_, p);
      if (per_sm > 0) d.peak_tflops[p] = per_sm * d.sm_count * clock_hz / kTera;
    }
    d.peak_source = "computed: " + std::to_string(d.sm_count) + " SMs x " +
                    std::to_string(static_cast<int>(clock_hz / kMega)) +
                    " MHz (cudaDevAttrClockRate) x dense tensor FLOP per clock per SM of sm_" +
                    std::to_string(cc_) +
                    " (NVIDIA architecture whitepapers; fp32: the CUDA cores' FMA rate, cuBLAS's "
                    "default math without TF32); datasheets may quote a lower clock";
    const double memory_clock_hz = device_attribute(cudaDevAttrMemoryClockRate, device_) * kKilo;
    const double bus_bits = device_attribute(cudaDevAttrGlobalMemoryBusWidth, device_);
    d.peak_memory_gbps = 2.0 * memory_clock_hz * bus_bits / 8.0 / kGB;
    d.peak_memory_source = "computed: 2 x memory clock (cudaDevAttrMemoryClockRate) x bus width (" +
                           std::to_string(static_cast<int>(bus_bits)) + " bits)";
    d.software = software_;
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    d.software["cuda_runtime"] =
        std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
    d.software["cuda_driver"] =
        std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
    d.software["cublaslt"] = cublaslt_version();
    const std::string mpi = group.mpi_version();
    if (!mpi.empty()) d.software["mpi"] = mpi;
    auto timer = timers_(stream_);
    d.software["kernel_timer"] = timer->name();
  }

  void flush_l2(cudaStream_t stream) {
    PARPLAN_CUDA_CHECK(cudaMemsetAsync(flush_, 0, flush_bytes_, stream));
  }

  // A probe that flushes L2, then times `work` (enqueued on `stream`, the timer's) with the
  // kernel timer; all ranks agree on the slowest rank's device time.
  Probe timed_probe(ProcessGroup& group, KernelTimer* timer, std::function<void()> work,
                    const ProfileOptions& options) {
    return timed_probe(group, timer, std::move(work), options, stream_);
  }
  Probe timed_probe(ProcessGroup& group, KernelTimer* timer, std::function<void()> work,
                    const ProfileOptions& options, cudaStream_t stream) {
    Probe probe;
    probe.prepare = [work, options, stream] {
      for (int i = 0; i < std::max(1, options.stopping.warmup_runs); ++i) work();
      PARPLAN_CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    probe.take = [this, &group, timer, work, stream] {
      CpuTimer wall;
      wall.start();
      flush_l2(stream);
      timer->start();
      work();
      const double seconds = group.max_over_ranks(timer->stop());
      return Sample{seconds, group.max_over_ranks(wall.elapsed_s())};
    };
    return probe;
  }

  void measure_gemms(ProcessGroup& group, const ProfileOptions& options, RawProfile& raw) {
    const auto shapes =
        options.gemm_shapes.empty() ? gpu_gemm_shapes(options.quick) : options.gemm_shapes;
    std::vector<std::string> precisions = options.gemm_precisions;
    if (precisions.empty()) {
      precisions = options.quick ? std::vector<std::string>{"bf16", "fp8"}
                                 : std::vector<std::string>{"bf16", "fp16", "fp8"};
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    PARPLAN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double chunk_bytes = std::min(static_cast<double>(free_bytes) / 2.0, 16.0 * kGiB);
    auto timer = timers_(stream_);
    for (const auto& precision : precisions) {
      if (!gemm_precision_supported(precision, cc_)) {
        raw.warnings.push_back("GEMM " + precision + ": not supported on sm_" +
                               std::to_string(cc_) + " by this backend; skipped");
        continue;
      }
      report(options, group,
             "GEMM " + precision + ": " + std::to_string(shapes.size()) + " shapes (cuBLASLt, " +
                 timer->name() + ")");
      // Interleaved in chunks whose operands fit in half the free memory.
      std::size_t begin = 0;
      while (begin < shapes.size()) {
        std::vector<std::unique_ptr<CublasLtGemm>> gemms;
        std::vector<Probe> probes;
        double bytes = 0;
        std::size_t end = begin;
        while (end < shapes.size() && gemms.size() < 32) {
          const GemmShape& s = shapes[end];
          const double need = static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) * s.batch * 2;
          if (!gemms.empty() && bytes + need > chunk_bytes) break;
          gemms.push_back(std::make_unique<CublasLtGemm>(s, precision, stream_, 1234 + end));
          bytes += gemms.back()->operand_bytes();
          CublasLtGemm* gemm = gemms.back().get();
          probes.push_back(timed_probe(
              group, timer.get(), [gemm] { gemm->run(); }, options));
          ++end;
        }
        const auto times = run_interleaved(probes, options.stopping);
        for (std::size_t i = begin; i < end; ++i) {
          GemmRecord record{shapes[i], precision, times[i - begin]};
          if (!record.time.converged) {
            raw.warnings.push_back("GEMM " + precision + " " + to_string(record.shape) + ": " +
                                   profiler::describe(record.time));
          }
          raw.gemm.push_back(std::move(record));
        }
        begin = end;
      }
    }
  }

  void measure_memory(ProcessGroup& group, const ProfileOptions& options, RawProfile& raw) {
    auto timer = timers_(stream_);
    // HBM: the copy kernel over two buffers far larger than L2.
    const std::size_t buffer =
        std::max<std::size_t>(options.quick ? (512u << 20) : (1u << 30),
                              8 * static_cast<std::size_t>(raw.device.l2_cache_mib * kMiB));
    void* src = nullptr;
    void* dst = nullptr;
    PARPLAN_CUDA_CHECK(cudaMalloc(&src, buffer));
    PARPLAN_CUDA_CHECK(cudaMalloc(&dst, buffer));
    PARPLAN_CUDA_CHECK(cudaMemsetAsync(src, 1, buffer, stream_));
    cudaStream_t stream = stream_;
    report(options, group, "HBM bandwidth (copy kernel, " + std::to_string(buffer >> 20) + " MiB)");
    const auto copy = run_interleaved(
        {timed_probe(
            group, timer.get(), [=] { copy_bytes(dst, src, static_cast<int64_t>(buffer), stream); },
            options)},
        options.stopping);
    raw.memory_bound.push_back({"copy", "bf16", static_cast<int64_t>(buffer / 2), 1,
                                2.0 * static_cast<double>(buffer), copy[0]});
    // Memory-bound kernels of a layer on bf16 (Llama-70B-like widths, 8192 tokens).
    struct Kernel {
      std::string name;
      int64_t rows, cols;
    };
    const std::vector<Kernel> kernels = {
        {"layernorm", 8192, 8192}, {"softmax", 8192 * 8, 4096}, {"gelu", 8192, 28672}};
    report(options, group, "memory-bound kernels: " + std::to_string(kernels.size()));
    std::vector<Probe> probes;
    std::vector<double> bytes;
    for (const auto& k : kernels) {
      const int64_t count = k.rows * k.cols;
      PARPLAN_CHECK(static_cast<std::size_t>(count) * 2 <= buffer, "kernel buffer too small");
      fill_random(src, DeviceType::BF16, count, 99, stream_);
      if (k.name == "layernorm") {
        // gamma and beta: the first cols elements of the output buffer's tail.
        void* gamma = static_cast<char*>(dst) + buffer - 4 * k.cols;
        void* beta = static_cast<char*>(dst) + buffer - 2 * k.cols;
        fill_random(gamma, DeviceType::BF16, 2 * k.cols, 7, stream_);
        probes.push_back(timed_probe(
            group, timer.get(),
            [=] { layernorm_bf16(dst, src, gamma, beta, k.rows, k.cols, stream); }, options));
      } else if (k.name == "softmax") {
        probes.push_back(timed_probe(
            group, timer.get(), [=] { softmax_bf16(dst, src, k.rows, k.cols, stream); }, options));
      } else {
        probes.push_back(timed_probe(
            group, timer.get(), [=] { gelu_bf16(dst, src, count, stream); }, options));
      }
      bytes.push_back(2.0 * 2.0 * static_cast<double>(count));  // bf16 read + write
    }
    const auto times = run_interleaved(probes, options.stopping);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      raw.memory_bound.push_back(
          {kernels[i].name, "bf16", kernels[i].rows, kernels[i].cols, bytes[i], times[i]});
    }
    cudaFree(src);
    cudaFree(dst);
  }

  // The profiled program's own kernels (ProfileOptions::device_kernel_probes, the executor's):
  // made on this rank's GPU, enqueued on the legacy default stream as the executor does, and
  // timed there with a timer on that stream. GEMMs join the GEMM records at their precision
  // (fp32: the fit gives the node's fp32 figures), the others the memory-bound records.
  void measure_program_kernels(ProcessGroup& group, const ProfileOptions& options,
                               RawProfile& raw) {
    const std::vector<KernelProbe> kernels = options.device_kernel_probes(group.local_rank());
    if (kernels.empty()) return;
    report(options, group,
           "program kernels: " + std::to_string(kernels.size()) + " (the executor's, " +
               "on the default stream)");
    cudaStream_t legacy = nullptr;  // the legacy default stream
    auto timer = timers_(legacy);
    std::vector<Probe> probes;
    for (const auto& k : kernels)
      probes.push_back(timed_probe(group, timer.get(), k.run, options, legacy));
    const auto times = run_interleaved(probes, options.stopping);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const KernelProbe& k = kernels[i];
      if (k.gemm.m > 0) {
        GemmRecord record{k.gemm, k.precision, times[i]};
        if (!record.time.converged) {
          raw.warnings.push_back("GEMM " + k.precision + " " + to_string(k.gemm) +
                                 " (executor): " + profiler::describe(record.time));
        }
        raw.gemm.push_back(std::move(record));
        continue;
      }
      raw.memory_bound.push_back(probe_record(k, times[i]));
    }
    PARPLAN_CUDA_CHECK(cudaStreamSynchronize(legacy));
  }

  std::map<std::string, std::string> software_;
  std::unique_ptr<CollectiveBenchmark> collectives_;
  KernelTimerFactory timers_;
  int device_ = 0;
  int cc_ = 0;
  cudaStream_t stream_ = nullptr;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(std::map<std::string, std::string> software,
                                           std::unique_ptr<CollectiveBenchmark> collectives,
                                           KernelTimerFactory timers) {
  return std::make_unique<CudaBackend>(std::move(software), std::move(collectives), timers);
}

}  // namespace parplan::profiler::cuda
