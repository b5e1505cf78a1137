// The profile file: a synthetic run with known parameters goes through the writer
// (fits + serialisation), is written, loaded strictly and compared (round trip); the
// apply rules, the fit lookup, bad input and a job naming a profile as its node.
#include "core/hardware_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/job.h"
#include "core/presets.h"
#include "profiler/fit_gemm.h"
#include "profiler/gemm_shapes.h"
#include "profiler/profile_writer.h"

namespace parplan::profiler {
namespace {

namespace fs = std::filesystem;

Measurement exact(double seconds) {
  Measurement m;
  m.samples_s = {seconds, seconds, seconds, seconds, seconds};
  m.median_s = m.min_s = m.max_s = seconds;
  m.count = 5;
  m.converged = true;
  return m;
}

// Truth of the synthetic CPU: 40 GFLOP/s fp32 and 20 fp64, halves 4/6/8, a 3 us launch
// floor (it binds the 32^3 fp32 GEMM, so it can be recovered), 25 GB/s copy; all-reduce over 2
// ranks: 0.5 us + S / 8 GB/s busbw below 64 KiB, 20 us + S / 2 GB/s from there.
const GemmModel kFp32{{0.040}, 4.0, 6.0, 8.0, 3.0};
const GemmModel kFp64{{0.020}, 4.0, 6.0, 8.0, 3.0};

RawProfile synthetic_cpu_run(bool with_collectives) {
  RawProfile raw;
  raw.host = {"testhost", "Test CPU", "intel", 2, 16.0};
  raw.device.name = "Test CPU";
  raw.device.vendor = "cpu";
  raw.device.architecture = "cpu";
  raw.device.backend = "cpu";
  raw.device.memory_gib = 8.0;
  raw.device.l2_cache_mib = 32;
  raw.device.l2_cache_source = "test";
  raw.device.software = {{"compiler", "test"}};
  raw.ranks = with_collectives ? 2 : 1;
  raw.ranks_per_host = raw.ranks;
  for (const auto& [precision, model] : {std::pair{"fp32", kFp32}, std::pair{"fp64", kFp64}}) {
    GemmFitInput in;
    in.precisions = {precision};
    in.element_bytes = {element_bytes(precision)};
    in.memory_bandwidth_gbps = 25.0;
    for (const auto& shape : cpu_gemm_shapes(true)) {
      raw.gemm.push_back({shape, precision, exact(gemm_model_time_s(model, in, {shape, 0, 1.0}))});
    }
  }
  raw.memory_bound.push_back(
      {"copy", "fp64", 1 << 24, 1, 256.0 * (1 << 20), exact(256.0 * (1 << 20) / 25e9)});
  raw.memory_bound.push_back(
      {"triad", "fp64", 1 << 24, 1, 384.0 * (1 << 20), exact(384.0 * (1 << 20) / 20e9)});
  if (with_collectives) {
    for (double s = 8; s <= 64 * 1024 * 1024; s *= 2) {
      CollectiveRecord r;
      r.op = Collective::AllReduce;
      r.group_size = 2;
      r.span = "intra_node";
      r.size_bytes = s;
      r.time = exact(s < 65536 ? collective_time_s(r.op, 2, s, 0.5, 8.0)
                               : collective_time_s(r.op, 2, s, 20.0, 2.0));
      raw.collectives.push_back(r);
    }
  }
  return raw;
}

Json build(const RawProfile& raw) {
  return build_profile(raw, default_profile_options(true), {"2025-01-02T03:04:05Z", "test", 1.5});
}

std::string temp_file(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("parplan_profile_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

TEST(HardwareProfile, WriterFitsKnownParametersAndRoundTrips) {
  const Json doc = build(synthetic_cpu_run(true));
  const std::string path = temp_file("roundtrip.json");
  write_file_atomically(path, doc.dump(1));
  const HardwareProfile loaded = load_hardware_profile(path);
  const NodeSpec& node = loaded.node;
  const GpuSpec& gpu = node.gpu;
  EXPECT_EQ(gpu.vendor, "cpu");
  EXPECT_EQ(gpu.architecture, "cpu");
  EXPECT_EQ(node.gpus_per_node, 2);
  EXPECT_NEAR(gpu.peak_tflops(Precision::Fp32) / 0.040, 1.0, 0.01);
  EXPECT_DOUBLE_EQ(gpu.max_matmul_efficiency(Precision::Fp32), 1.0);
  EXPECT_NEAR(gpu.gemm_m_half / 4.0, 1.0, 0.01);
  EXPECT_NEAR(gpu.gemm_n_half / 6.0, 1.0, 0.01);
  EXPECT_NEAR(gpu.gemm_k_half / 8.0, 1.0, 0.01);
  EXPECT_NEAR(gpu.kernel_launch_us / 3.0, 1.0, 0.01);
  EXPECT_EQ(gpu.sm_count, 0);
  EXPECT_NEAR(gpu.hbm_bandwidth_gbps, 25.0, 1e-9);
  EXPECT_DOUBLE_EQ(gpu.hbm_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(gpu.memory_gib, 8.0);
  EXPECT_NEAR(node.intra.link_bandwidth_gbps / 2.0, 1.0, 0.01);
  EXPECT_NEAR(node.intra.latency_us / 0.5, 1.0, 0.01);
  EXPECT_EQ(node.inter.nics_per_node, 0);
  EXPECT_TRUE(node.unsourced_figures.empty());
  ASSERT_EQ(node.collective_fits.size(), 2u);
  EXPECT_NEAR(node.collective_fits[1].busbw_gbps / 2.0, 1.0, 0.01);
  EXPECT_TRUE(loaded.measured_span("intra_node"));
  EXPECT_FALSE(loaded.measured_span("inter_node"));
  EXPECT_NEAR(loaded.fits["gemm"]["fp64"]["throughput_tflops"]["fp64"].get<double>() / 0.020, 1.0,
              0.01);
  EXPECT_EQ(loaded.measurements["gemm"].size(), 2 * cpu_gemm_shapes(true).size());
  EXPECT_EQ(loaded.measurements["collectives"].size(), 24u);
  // The node reads back to the same spec, and the profile's text to the same document.
  EXPECT_EQ(node_spec_to_json(node),
            node_spec_to_json(parse_node_spec(doc["node"], "<doc>", "node")));
  EXPECT_EQ(load_json_file(path), doc);
  // Predictions with the loaded node reproduce the synthetic truth.
  const GemmShape unseen{300, 700, 500, 1};
  GemmFitInput in{{"fp32"}, {4.0}, {}, 25.0, 0, 128, 256};
  EXPECT_NEAR(
      gemm_time_s(gpu, unseen, Precision::Fp32) / gemm_model_time_s(kFp32, in, {unseen, 0, 1.0}),
      1.0, 0.01);
  EXPECT_NEAR(*fitted_collective_time_s(node, Collective::AllReduce, "intra_node", 2, 3e6) /
                  collective_time_s(Collective::AllReduce, 2, 3e6, 20.0, 2.0),
              1.0, 0.01);
}

// Truth of a synthetic GPU profile: bf16 tensor-core GEMMs (800 of a 1000 TFLOP/s peak,
// halves 64/64/128) and the executor's fp32 CUDA-core GEMMs (50 of 60, halves 16/32/48, which
// differ from the node's); an executor layernorm and attention measured at fp32.
const GemmModel kBf16Gpu{{800.0}, 64.0, 64.0, 128.0, 4.0};
const GemmModel kFp32Gpu{{50.0}, 16.0, 32.0, 48.0, 4.0};

RawProfile synthetic_gpu_run() {
  RawProfile raw;
  raw.host = {"gpuhost", "Test CPU", "amd", 16, 128.0};
  raw.device.name = "Test GPU";
  raw.device.vendor = "nvidia";
  raw.device.architecture = "hopper";
  raw.device.backend = "cuda";
  raw.device.memory_gib = 80.0;
  raw.device.peak_tflops = {{"bf16", 1000.0}, {"fp32", 60.0}};
  raw.device.peak_source = "test";
  raw.device.software = {{"compiler", "test"}};
  raw.ranks = 1;
  raw.ranks_per_host = 1;
  for (const auto& [precision, model] :
       {std::pair{"bf16", kBf16Gpu}, std::pair{"fp32", kFp32Gpu}}) {
    GemmFitInput in;
    in.precisions = {precision};
    in.element_bytes = {element_bytes(precision)};
    in.memory_bandwidth_gbps = 3000.0;
    for (const auto& shape : gpu_gemm_shapes(true)) {
      raw.gemm.push_back({shape, precision, exact(gemm_model_time_s(model, in, {shape, 0, 1.0}))});
    }
  }
  const double copy_bytes = 2.0 * (1 << 30);
  raw.memory_bound.push_back({"copy", "bf16", 1 << 29, 1, copy_bytes, exact(copy_bytes / 3e12)});
  MemoryBoundRecord norm{"layernorm_forward",
                         "fp32",
                         8192,
                         1024,
                         2.0 * 4 * 8192 * 1024,
                         exact(2.0 * 4 * 8192 * 1024 / 1.5e12)};
  norm.probe = true;
  raw.memory_bound.push_back(norm);
  for (const auto& [name, flops] :
       {std::pair{"attention_forward", 4e12}, {"attention_backward", 1e13}}) {
    MemoryBoundRecord a{name, "fp32", 1024, 64, 0, exact(flops / 20e12)};
    a.flops = flops;
    a.probe = true;
    raw.memory_bound.push_back(a);
  }
  return raw;
}

TEST(HardwareProfile, GpuFp32GemmsGetTheirOwnFiguresAndKernelFiguresTheirPrecision) {
  const Json doc = build(synthetic_gpu_run());
  const NodeSpec node = parse_node_spec(doc["node"], "<doc>", "node");
  // The host's CPU vendor goes with the node (NCCL's ring model across nodes depends on it).
  EXPECT_EQ(node.host_cpu_vendor, "amd");
  const GpuSpec& gpu = node.gpu;
  // The node's shape figures are bf16's; fp32 has its own peak share and ramps.
  EXPECT_NEAR(gpu.max_matmul_efficiency(Precision::Bf16) / 0.8, 1.0, 0.01);
  EXPECT_NEAR(gpu.gemm_m_half / 64.0, 1.0, 0.02);
  EXPECT_DOUBLE_EQ(gpu.peak_tflops(Precision::Fp32), 60.0);
  EXPECT_NEAR(gpu.max_matmul_efficiency(Precision::Fp32) / (50.0 / 60.0), 1.0, 0.01);
  const GpuSpec::GemmRamps fp32 = gpu.gemm_ramps(Precision::Fp32);
  EXPECT_NEAR(fp32.m_half / 16.0, 1.0, 0.02);
  EXPECT_NEAR(fp32.n_half / 32.0, 1.0, 0.02);
  EXPECT_NEAR(fp32.k_half / 48.0, 1.0, 0.02);
  EXPECT_NEAR(gpu.gemm_ramps(Precision::Bf16).k_half / 128.0, 1.0, 0.02);
  // Predictions at both precisions reproduce their truths on a shape not measured.
  const GemmShape unseen{3000, 1500, 700, 1};
  GemmFitInput bf16_in{{"bf16"}, {2.0}, {}, 3000.0, 0, 128, 256};
  GemmFitInput fp32_in{{"fp32"}, {4.0}, {}, 3000.0, 0, 128, 256};
  EXPECT_NEAR(gemm_time_s(gpu, unseen, Precision::Bf16) /
                  gemm_model_time_s(kBf16Gpu, bf16_in, {unseen, 0, 1.0}),
              1.0, 0.02);
  EXPECT_NEAR(gemm_time_s(gpu, unseen, Precision::Fp32) /
                  gemm_model_time_s(kFp32Gpu, fp32_in, {unseen, 0, 1.0}),
              1.0, 0.02);
  // The executor's kernel figures are fp32's: fp32 jobs use them, bf16 jobs the models.
  ASSERT_TRUE(gpu.kernel_figures_precision.has_value());
  EXPECT_EQ(*gpu.kernel_figures_precision, Precision::Fp32);
  EXPECT_TRUE(gpu.kernel_figures_apply(Precision::Fp32));
  EXPECT_FALSE(gpu.kernel_figures_apply(Precision::Bf16));
  EXPECT_NEAR(gpu.kernel_gbps.at("layernorm_forward"), 1500.0, 1e-6);
  EXPECT_NEAR(gpu.attention_forward_tflops, 20.0, 1e-9);
  // The node reads back to the same spec (ramps and the precision survive the round trip).
  EXPECT_EQ(node_spec_to_json(node),
            node_spec_to_json(parse_node_spec(node_spec_to_json(node), "<again>", "node")));
}

TEST(HardwareProfile, ACpuProfileKeepsItsKernelFiguresForEveryPrecision) {
  const NodeSpec node = parse_node_spec(build(synthetic_cpu_run(false))["node"], "<doc>", "node");
  EXPECT_FALSE(node.gpu.kernel_figures_precision.has_value());
  EXPECT_TRUE(node.gpu.kernel_figures_apply(Precision::Bf16));
  EXPECT_EQ(node.gpu.gemm_ramps(Precision::Fp32).m_half, node.gpu.gemm_m_half);
}

TEST(HardwareProfile, ApplyKeepsTopologyAndUnmeasuredFigures) {
  const ClusterSpec preset = make_cluster(*find_node_preset("dgx-h100"), 2, 16);
  const HardwareProfile with = parse_hardware_profile(build(synthetic_cpu_run(true)), "with");
  const ClusterSpec a = apply_profile(preset, with);
  EXPECT_EQ(a.node.gpus_per_node, 8);
  EXPECT_EQ(a.num_nodes, 2);
  EXPECT_EQ(a.num_gpus, 16);
  EXPECT_EQ(a.node.name, "dgx-h100+profile");
  EXPECT_EQ(a.node.gpu.vendor, "cpu");
  EXPECT_NEAR(a.node.intra.link_bandwidth_gbps, with.node.intra.link_bandwidth_gbps, 1e-12);
  EXPECT_EQ(a.node.inter.nics_per_node, 8);  // no inter-node measurement: the preset's
  EXPECT_EQ(a.node.collective_fits.size(), 2u);

  const HardwareProfile without =
      parse_hardware_profile(build(synthetic_cpu_run(false)), "without");
  const ClusterSpec b = apply_profile(preset, without);
  EXPECT_DOUBLE_EQ(b.node.intra.link_bandwidth_gbps, preset.node.intra.link_bandwidth_gbps);
  EXPECT_TRUE(b.node.collective_fits.empty());
  EXPECT_EQ(b.node.gpu.name, "Test CPU");

  // The measured host's CPU vendor replaces the preset's (NCCL's ring model across nodes
  // depends on it); a profile that recorded none keeps the preset's.
  const ClusterSpec amd_preset = make_cluster(*find_node_preset("dgx-a100-80gb"), 2, 16);
  EXPECT_EQ(apply_profile(amd_preset, with).node.host_cpu_vendor, "intel");
  Json old = build(synthetic_cpu_run(true));
  old["host"].erase("cpu_vendor");
  old["node"].erase("host_cpu_vendor");
  EXPECT_EQ(apply_profile(amd_preset, parse_hardware_profile(old, "old")).node.host_cpu_vendor,
            "amd");
}

TEST(HardwareProfile, FitLookupBySizeAndGroup) {
  NodeSpec node;
  node.collective_fits = {{"all_reduce", "intra_node", 2, 1.0, 10.0, 0, 1000, -1},
                          {"all_reduce", "intra_node", 2, 5.0, 20.0, 1000, 0, -1},
                          {"all_reduce", "intra_node", 8, 9.0, 30.0, 0, 0, -1},
                          {"all_gather", "inter_node", 0, 40.0, 40.0, 0, 0, -1}};
  using C = Collective;
  EXPECT_DOUBLE_EQ(find_collective_fit(node, C::AllReduce, "intra_node", 2, 10)->latency_us, 1.0);
  EXPECT_DOUBLE_EQ(find_collective_fit(node, C::AllReduce, "intra_node", 2, 1000)->latency_us, 5.0);
  EXPECT_DOUBLE_EQ(find_collective_fit(node, C::AllReduce, "intra_node", 8, 10)->latency_us, 9.0);
  // Nearest group size (log scale): 4 is as near 2 as 8; 6 is nearer 8.
  EXPECT_DOUBLE_EQ(find_collective_fit(node, C::AllReduce, "intra_node", 6, 1e6)->latency_us, 9.0);
  EXPECT_DOUBLE_EQ(find_collective_fit(node, C::AllGather, "inter_node", 64, 1e6)->latency_us,
                   40.0);
  EXPECT_EQ(find_collective_fit(node, C::AllReduce, "inter_node", 2, 10), nullptr);
  EXPECT_FALSE(fitted_collective_time_s(node, C::SendRecv, "intra_node", 2, 10).has_value());
  EXPECT_NEAR(*fitted_collective_time_s(node, C::AllReduce, "intra_node", 2, 2e9),
              collective_time_s(C::AllReduce, 2, 2e9, 5.0, 20.0), 1e-15);
}

void expect_input_error(const Json& doc, const std::string& key_path) {
  try {
    parse_hardware_profile(doc, "bad.json");
    ADD_FAILURE() << "no error for " << key_path;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.json");
    EXPECT_EQ(e.key_path(), key_path) << e.what();
  }
}

TEST(HardwareProfile, BadInputNamesFileAndKeyPath) {
  const Json good = build(synthetic_cpu_run(true));
  Json doc = good;
  doc["schema"] = "parplan-profile/9";
  expect_input_error(doc, "schema");
  doc = good;
  doc.erase("node");
  expect_input_error(doc, "node");
  doc = good;
  doc["measurements"]["gemm"][3]["m"] = 0;
  expect_input_error(doc, "measurements.gemm[3].m");
  doc = good;
  doc["measurements"]["collectives"][0]["op"] = "broadcast";
  expect_input_error(doc, "measurements.collectives[0].op");
  doc = good;
  doc["node"]["gpu"]["dense_tflops"]["fp32"]["value"] = -1;
  expect_input_error(doc, "node.gpu.dense_tflops.fp32.value");
  doc = good;
  doc["node"]["collective_fits"][0]["max_size_bytes"] = 1;
  doc["node"]["collective_fits"][0]["min_size_bytes"] = 5;
  expect_input_error(doc, "node.collective_fits[0].max_size_bytes");
  doc = good;
  doc["hosts"] = 1;
  expect_input_error(doc, "hosts");
  doc = good;
  doc["coverage"]["collective_spans"] = {"intra_node", "rack"};
  expect_input_error(doc, "coverage.collective_spans[1]");
  EXPECT_THROW(load_hardware_profile(temp_file("missing.json")), InputError);
}

TEST(HardwareProfile, AJobMayNameAProfileAsItsNode) {
  const std::string profile = temp_file("node_profile.json");
  write_file_atomically(profile, build(synthetic_cpu_run(true)).dump());
  const std::string job = temp_file("job.json");
  write_file_atomically(job, R"({"model": "llama3.1-8b",
    "cluster": {"node": "node_profile.json", "num_gpus": 2},
    "training": {"global_batch_size": 8, "seq_length": 1024, "precision": "fp32"},
    "plan": {"tp": 2, "micro_batch_size": 1}})");
  const Job loaded = load_job(job);
  EXPECT_EQ(loaded.cluster.node.gpu.vendor, "cpu");
  EXPECT_EQ(loaded.cluster.node.gpus_per_node, 2);
  EXPECT_EQ(loaded.cluster.node.collective_fits.size(), 2u);
}

}  // namespace
}  // namespace parplan::profiler
