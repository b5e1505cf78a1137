// GpuSpec, NodeSpec and ClusterSpec: the hardware a job runs on (docs/job_file.md#cluster).
//
// A node file (hardware_profiles/nodes/*.json, or an inline object) gives datasheet figures
// and a few public measurements (max achievable matmul throughput, collective bus bandwidth).
// Every figure may be a number or {"value": x, "source": "..."}; presets must carry sources.
// The schema is documented in hardware_profiles/README.md. Tested in
// tests/core/presets_test.cpp (every preset parses and is sourced).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_input.h"

namespace parplan {

enum class Precision { Fp32, Fp16, Bf16, Fp8 };
inline constexpr int kNumPrecisions = 4;
const char* to_string(Precision precision);
// Bytes of one element of the 16-bit (or fp32) compute type; fp8 jobs keep 16-bit activations.
double activation_bytes(Precision precision);

struct GpuSpec {
  std::string name;
  std::string vendor = "nvidia";
  // Tensor-core generation: "volta", "ampere", "ada", "hopper", "blackwell", "cdna3", "cpu".
  // Kernels written for one generation (e.g. FlashAttention-2) reach less on later ones.
  std::string architecture = "hopper";
  double memory_gib = 0;          // usable device memory
  double hbm_bandwidth_gbps = 0;  // datasheet, GB/s
  double hbm_efficiency = 0.9;    // achievable fraction for streaming kernels (measured)
  // Dense tensor throughput per precision, TFLOP/s; 0 where unsupported. fp32 means TF32 in
  // the presets; in a CUDA profile it is cuBLAS's default fp32 math on the CUDA cores (no
  // TF32), which PyTorch's default and parplan's executor use.
  std::array<double, kNumPrecisions> dense_tflops{};
  // Measured maximum achievable matmul throughput as a fraction of dense peak (MAMF).
  std::array<double, kNumPrecisions> matmul_efficiency{};
  // Tensor-core clock sustained through a training run (power- and thermally-limited) as a
  // fraction of the clock the peak and the burst MAMF measurement assume.
  double sustained_clock_fraction = 1.0;
  int64_t sm_count = 0;
  double l2_cache_mib = 0;
  double kernel_launch_us = 4.0;  // host-side launch + dependency gap per kernel
  // Vendor thermal design power (board power limit), watts; 0: not given. Used for the run's
  // energy (cost_models/time_to_train.h), not for time.
  double tdp_w = 0;
  // Measured throughput of named kernels (a profile of the machine at hand): memory-bound
  // kernels in GB/s of bytes read + written ("layernorm", "gelu", "swiglu", "add", "adamw",
  // ...), keyed by the kernel kinds cost_models/layer_cost.cpp asks for; absent kinds use
  // hbm_bandwidth_gbps * hbm_efficiency.
  std::map<std::string, double> kernel_gbps;
  // Measured attention throughput, TFLOP/s counted over the whole score matrix (4*b*h*s^2*d
  // forward, 10*b*h*s^2*d backward); 0: use the flash-attention model.
  double attention_forward_tflops = 0;
  double attention_backward_tflops = 0;
  // The precision the measured kernel figures above (kernel_gbps, attention_tflops) were taken
  // in: jobs of another precision use the models instead (a CUDA profile times the executor's
  // fp32 kernels, which say nothing of a bf16 framework's). Unset: every job uses them (a CPU
  // profile: its executor computes in fp32 whatever the job's precision).
  std::optional<Precision> kernel_figures_precision;
  bool kernel_figures_apply(Precision job_precision) const {
    return !kernel_figures_precision || *kernel_figures_precision == job_precision;
  }
  // GEMM efficiency by shape (core/gemm_efficiency.h): a dimension equal to its *_half
  // value halves the throughput of large GEMMs (pipeline fill, under-filled tiles); tiles of
  // gemm_tile_m x gemm_tile_n spread over sm_count processors in waves (0 disables waves).
  double gemm_m_half = 64;
  double gemm_n_half = 64;
  double gemm_k_half = 128;
  int64_t gemm_tile_m = 128;
  int64_t gemm_tile_n = 256;
  // A precision whose GEMM kernels fill differently from the node's (a CUDA profile's fp32
  // GEMMs run on the CUDA cores, not the tensor cores): its own fitted ramps; m_half <= 0
  // means the node's gemm_*_half.
  struct GemmRamps {
    double m_half = 0;
    double n_half = 0;
    double k_half = 0;
  };
  std::array<GemmRamps, kNumPrecisions> gemm_ramps_by_precision{};
  GemmRamps gemm_ramps(Precision p) const {
    const GemmRamps& own = gemm_ramps_by_precision[static_cast<int>(p)];
    return own.m_half > 0 ? own : GemmRamps{gemm_m_half, gemm_n_half, gemm_k_half};
  }

  double peak_tflops(Precision p) const { return dense_tflops[static_cast<int>(p)]; }
  // The precision whose peak a GEMM of precision p runs at: p itself where the GPU has a
  // peak for it, else its 16-bit tensor-core path (bf16, then fp16: bf16 on a V100, fp8 on an
  // A100), else fp32 (a CPU node measured by parplan profile).
  Precision computed_as(Precision p) const {
    for (const Precision q : {p, Precision::Bf16, Precision::Fp16, Precision::Fp32}) {
      if (peak_tflops(q) > 0) return q;
    }
    return p;
  }
  // The dense peak a GEMM of precision p runs at (the peak of computed_as(p)).
  double computed_peak_tflops(Precision p) const { return peak_tflops(computed_as(p)); }
  double max_matmul_efficiency(Precision p) const { return matmul_efficiency[static_cast<int>(p)]; }
};

// How the GPUs of one node talk to each other.
enum class IntraFabric {
  Switch,  // NVSwitch / NVLink switch: every GPU has its full bandwidth to any peer
  Mesh,    // fully connected point-to-point links (AMD Infinity Fabric): per-peer link bandwidth
  Pcie,    // PCIe through switches and the CPU interconnect, optionally NVLink bridges in islands
};
const char* to_string(IntraFabric fabric);

struct IntraNodeSpec {
  IntraFabric fabric = IntraFabric::Switch;
  double link_bandwidth_gbps = 0;        // per direction: per GPU (switch, pcie) or per peer (mesh)
  double busbw_efficiency = 0.8;         // measured large-message ring busbw / link bandwidth
  double nvls_allreduce_busbw_gbps = 0;  // NVLink SHARP all-reduce busbw (0: none)
  int64_t island_gpus = 1;               // pcie: GPUs joined by NVLink bridges
  double island_bandwidth_gbps = 0;      // pcie: bridge bandwidth per direction
  double latency_us = 10;                // small-message collective latency inside the node
};

struct InterNodeSpec {
  int64_t nics_per_node = 0;
  double nic_gbit_per_s = 0;          // line rate of one NIC, Gb/s
  double nic_busbw_efficiency = 0.9;  // measured ring busbw per NIC / line rate
  double latency_us = 40;             // small-message collective latency across nodes
};

// A fitted collective: time = latency_us + algbw-bytes / (busbw_gbps * 1e9) * bus_factor.
// Measured profiles carry these per operation and span; they override the link formulas.
// A fit may hold for a range of sizes only (protocol and cache regimes differ): it applies to
// min_size_bytes <= S < max_size_bytes, max_size_bytes 0 meaning no upper end
// (core/hardware_profile.h find_collective_fit picks the one that applies).
struct CollectiveFit {
  std::string op;          // all_reduce, all_gather, reduce_scatter, all_to_all, send_recv
  std::string span;        // intra_node or inter_node
  int64_t group_size = 0;  // 0: any size
  double latency_us = 0;
  double busbw_gbps = 0;
  double min_size_bytes = 0;
  double max_size_bytes = 0;       // 0: unbounded
  double rms_relative_error = -1;  // of the fit over its measurements; -1: not given
};

// The values a node's host_cpu_vendor (and a profile's host.cpu_vendor) may take.
inline const std::initializer_list<std::string_view> kHostCpuVendors = {"intel", "amd", "arm",
                                                                        "other"};

struct NodeSpec {
  std::string name;
  std::string description;
  int64_t gpus_per_node = 8;
  GpuSpec gpu;
  IntraNodeSpec intra;
  InterNodeSpec inter;
  std::vector<CollectiveFit> collective_fits;
  // Power of one node beside its GPUs (CPUs, memory, NICs, switches, fans), watts: the
  // system's maximum power minus its GPUs' TDP (hardware_profiles/README.md); -1: not given.
  double node_overhead_w = -1;
  // Bandwidth between one GPU and host memory, GB/s per direction, with every GPU of the node
  // transferring at once (PCIe x16 or NVLink-C2C); -1: not given. Activation offloading
  // moves its tensors over it.
  double host_link_gbps = -1;
  // Vendor of the node's host CPUs: "intel", "amd", "arm" or "other". NCCL's ring model
  // depends on it across nodes (src/graph/tuning.cc: the LL bandwidth cap llMaxBws and the
  // per-step network overhead getNetOverhead are chosen by CPU vendor, AMD apart from the
  // rest); cost_models/collective_model.cpp.
  std::string host_cpu_vendor = "intel";  // one of kHostCpuVendors
  // Key paths of figures given without a source (presets must have none).
  std::vector<std::string> unsourced_figures;

  double nic_bandwidth_bytes_per_s() const;  // achievable, one NIC
};

struct ClusterSpec {
  NodeSpec node;
  int64_t num_nodes = 1;
  int64_t num_gpus = 8;  // GPUs used (may be below num_nodes * gpus_per_node)
  // With cluster.gpus_used_per_node: the GPUs each node has, of which node.gpus_per_node are
  // used (64 of an NVL72 rack's 72); 0: every GPU of a node is used.
  int64_t installed_gpus_per_node = 0;
};

NodeSpec parse_node_spec(const Json& object, const std::string& file, const std::string& path);
Json node_spec_to_json(const NodeSpec& node);

std::optional<Precision> parse_precision(std::string_view text);

}  // namespace parplan
