// Checks the built-in presets: every node preset (hardware_profiles/nodes/*.json) parses with
// a source on every figure and datasheet-sane values; `parplan nodes` lists the presets
// every job file may name; every model preset (tools/models/*.json) parses and its parameter count
// matches the published one. Counts are ModelSpec::total_params / active_params
// (core/model_spec.cpp: no linear biases, MLA and leading dense layers modelled).
#include "core/presets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "core/check.h"
#include "core/json_input.h"

namespace parplan {
namespace {

// The presets docs/job_file.md#cluster promises: they must exist.
const std::vector<std::string> kContractNodes = {"dgx-v100", "dgx-a100-40gb", "dgx-a100-80gb",
                                                 "dgx-h100", "dgx-h200",      "hgx-h800",
                                                 "dgx-b200", "gb200-nvl72"};
// Servers of the later "more servers" issue.
const std::vector<std::string> kServerNodes = {"xe9680-h100", "pcie-4x-l40s", "pcie-8x-h100-nvl",
                                               "mi300x-8x",   "dgx-b300",     "gb300-nvl72"};
// Named clusters whose network efficiency is a measurement on that cluster, not a vendor's
// line-rate figure (NCCL over Omni-Path verbs carried a fifth of line rate on Jean Zay).
const std::vector<std::string> kMeasuredNetworkNodes = {"jean-zay-a100-80gb", "jean-zay-v100-32gb"};

double peak(const NodeSpec& n, Precision p) { return n.gpu.peak_tflops(p); }

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(NodePresets, ContractAndServerPresetsExist) {
  const auto names = node_preset_names();
  for (const auto& name : kContractNodes) EXPECT_TRUE(contains(names, name)) << name;
  for (const auto& name : kServerNodes) EXPECT_TRUE(contains(names, name)) << name;
}

TEST(NodePresets, EveryPresetParsesWithEveryFigureSourced) {
  for (const auto& file : embedded_node_files()) {
    SCOPED_TRACE(std::string(file.path));
    const NodeSpec n = *find_node_preset(file.name);
    EXPECT_EQ(n.name, file.name) << "the preset's name must equal its file stem";
    EXPECT_FALSE(n.description.empty());
    std::string unsourced;
    for (const auto& key : n.unsourced_figures) unsourced += key + " ";
    EXPECT_TRUE(n.unsourced_figures.empty()) << "figures without a source: " << unsourced;
  }
}

// The host CPU vendor (NCCL picks its LL cap and network overhead by it across nodes): the
// presets whose hosts are not Intel name theirs with a source, and a value outside the list is
// an error naming the key.
TEST(NodePresets, HostCpuVendorIsNamedWithItsSource) {
  EXPECT_EQ(find_node_preset("dgx-a100-80gb")->host_cpu_vendor, "amd");
  EXPECT_EQ(find_node_preset("jean-zay-a100-80gb")->host_cpu_vendor, "amd");
  EXPECT_EQ(find_node_preset("gb200-nvl72")->host_cpu_vendor, "arm");
  EXPECT_EQ(find_node_preset("dgx-h100")->host_cpu_vendor, "intel");
  for (const auto& file : embedded_node_files()) {
    const Json raw = Json::parse(file.text);
    if (!raw.contains("host_cpu_vendor")) continue;
    SCOPED_TRACE(std::string(file.path));
    EXPECT_TRUE(raw.contains("sources") && raw["sources"].contains("host_cpu_vendor"));
  }
  Json bad = Json::parse(embedded_node_files().front().text);
  bad["host_cpu_vendor"] = "sparc";
  try {
    parse_node_spec(bad, "node.json", "");
    FAIL() << "host_cpu_vendor \"sparc\" was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("host_cpu_vendor"), std::string::npos) << what;
    EXPECT_NE(what.find("amd"), std::string::npos) << what;
  }
}

// Ranges every preset must satisfy; they catch sparse-for-dense, bidirectional-for-per-
// direction and bits-for-bytes mix-ups (docs/sources/hardware_notes.md §0).
TEST(NodePresets, FiguresAreInDatasheetRanges) {
  for (const auto& name : node_preset_names()) {
    SCOPED_TRACE(name);
    const NodeSpec n = *find_node_preset(name);
    const double half = std::max(peak(n, Precision::Bf16), peak(n, Precision::Fp16));
    EXPECT_GE(half, 100.0);
    EXPECT_LE(half, 2600.0);  // dense; GB200 2500 is the largest, sparse would be 5000
    if (peak(n, Precision::Fp8) > 0) {
      EXPECT_NEAR(peak(n, Precision::Fp8) / half, 2.0, 0.05) << "fp8 dense = 2 x 16-bit dense";
    }
    if (peak(n, Precision::Bf16) > 0) {
      // TF32 tensor throughput is half the 16-bit one on Ampere and later (and CDNA3).
      EXPECT_NEAR(peak(n, Precision::Fp32) / half, 0.5, 0.02);
    }
    for (int p = 0; p < kNumPrecisions; ++p) {
      EXPECT_GT(n.gpu.matmul_efficiency[p], 0.45);
      EXPECT_LE(n.gpu.matmul_efficiency[p], 0.95);
    }
    EXPECT_GT(n.gpu.memory_gib, 30.0);
    EXPECT_LT(n.gpu.memory_gib, 290.0);  // GB300's 277.5 GiB usable (288 GB HBM3e) is the largest
    EXPECT_GE(n.gpu.hbm_bandwidth_gbps, 800.0);
    EXPECT_LE(n.gpu.hbm_bandwidth_gbps, 8000.0);
    EXPECT_GE(n.intra.busbw_efficiency, 0.65);
    EXPECT_LE(n.intra.busbw_efficiency, 0.85);
    EXPECT_LE(n.intra.link_bandwidth_gbps, 900.0);  // per direction; NVLink5 is the largest
    EXPECT_GE(n.intra.latency_us, 5.0);
    EXPECT_LE(n.intra.latency_us, 50.0);
    EXPECT_GE(n.inter.nics_per_node, 1);
    EXPECT_GE(n.inter.nic_gbit_per_s, 100.0);
    EXPECT_LE(n.inter.nic_gbit_per_s, 800.0);  // ConnectX-8 (Blackwell Ultra) is the fastest
    EXPECT_GE(n.inter.nic_busbw_efficiency, contains(kMeasuredNetworkNodes, name) ? 0.05 : 0.9);
    EXPECT_LE(n.inter.nic_busbw_efficiency, 0.97);
    EXPECT_GE(n.inter.latency_us, 30.0);
    EXPECT_LE(n.inter.latency_us, 60.0);
    if (n.intra.nvls_allreduce_busbw_gbps > 0) {
      EXPECT_GT(n.intra.nvls_allreduce_busbw_gbps,
                n.intra.link_bandwidth_gbps * n.intra.busbw_efficiency);
    }
  }
}

// Jean Zay's A100 nodes are DGX A100 GPUs and NVLink behind 4 Omni-Path NICs; its V100 nodes
// are 4 V100s behind the same NICs of the same fabric. Both presets read the network from one
// benchmark (their sources; the collective itself: tests/cost_models/collective_model_test.cpp).
TEST(NodePresets, JeanZayNodesShareOneMeasuredOmniPathNetwork) {
  const auto jz = find_node_preset("jean-zay-a100-80gb");
  const auto dgx = find_node_preset("dgx-a100-80gb");
  const auto jz_v100 = find_node_preset("jean-zay-v100-32gb");
  const auto dgx_v100 = find_node_preset("dgx-v100");
  ASSERT_TRUE(jz.has_value() && dgx.has_value() && jz_v100.has_value() && dgx_v100.has_value());
  EXPECT_EQ(jz->gpu.name, dgx->gpu.name);
  EXPECT_DOUBLE_EQ(peak(*jz, Precision::Bf16), peak(*dgx, Precision::Bf16));
  EXPECT_DOUBLE_EQ(jz->intra.link_bandwidth_gbps, dgx->intra.link_bandwidth_gbps);
  // The V100 SXM2 part: the V100 of DGX-2's tensor peak and GEMM efficiency, 300 W.
  EXPECT_DOUBLE_EQ(peak(*jz_v100, Precision::Fp16), peak(*dgx_v100, Precision::Fp16));
  EXPECT_DOUBLE_EQ(jz_v100->gpu.tdp_w, 300.0);
  EXPECT_EQ(jz_v100->gpus_per_node, 4);
  EXPECT_EQ(jz_v100->intra.fabric, IntraFabric::Mesh);
  for (const NodeSpec* n : {&*jz, &*jz_v100}) {
    EXPECT_EQ(n->inter.nics_per_node, 4);
    EXPECT_DOUBLE_EQ(n->inter.nic_gbit_per_s, 100.0);
  }
  EXPECT_DOUBLE_EQ(jz_v100->inter.nic_busbw_efficiency, jz->inter.nic_busbw_efficiency);
}

TEST(NodePresets, DatasheetFigures) {
  const NodeSpec h100 = *find_node_preset("dgx-h100");
  EXPECT_DOUBLE_EQ(peak(h100, Precision::Bf16), 989.4);
  EXPECT_DOUBLE_EQ(peak(h100, Precision::Fp8), 1978.9);
  EXPECT_DOUBLE_EQ(h100.intra.link_bandwidth_gbps, 450);

  const NodeSpec a40 = *find_node_preset("dgx-a100-40gb");
  const NodeSpec a80 = *find_node_preset("dgx-a100-80gb");
  for (const NodeSpec* a : {&a40, &a80}) {
    EXPECT_DOUBLE_EQ(peak(*a, Precision::Bf16), 312);
    EXPECT_DOUBLE_EQ(peak(*a, Precision::Fp8), 0) << "Ampere has no fp8";
    EXPECT_DOUBLE_EQ(a->intra.link_bandwidth_gbps, 300);
    EXPECT_EQ(a->inter.nics_per_node, 8);
    EXPECT_DOUBLE_EQ(a->inter.nic_gbit_per_s, 200);
    EXPECT_DOUBLE_EQ(a->gpu.max_matmul_efficiency(Precision::Bf16), 0.869);
    EXPECT_EQ(a->gpu.gemm_tile_n, 128);
  }
  EXPECT_DOUBLE_EQ(a40.gpu.memory_gib, 40.0);
  EXPECT_DOUBLE_EQ(a80.gpu.memory_gib, 80.0);
  EXPECT_DOUBLE_EQ(a40.gpu.hbm_bandwidth_gbps, 1555);
  EXPECT_DOUBLE_EQ(a80.gpu.hbm_bandwidth_gbps, 2039);

  const NodeSpec v100 = *find_node_preset("dgx-v100");
  EXPECT_EQ(v100.gpus_per_node, 16);
  EXPECT_DOUBLE_EQ(peak(v100, Precision::Fp16), 125);
  EXPECT_DOUBLE_EQ(peak(v100, Precision::Bf16), 0) << "Volta has no bf16";
  EXPECT_DOUBLE_EQ(v100.intra.link_bandwidth_gbps, 150);
  EXPECT_EQ(v100.inter.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(v100.inter.nic_gbit_per_s, 100);

  const NodeSpec h200 = *find_node_preset("dgx-h200");
  EXPECT_NEAR(h200.gpu.memory_gib, 143771.0 / 1024, 0.05);
  EXPECT_DOUBLE_EQ(h200.gpu.hbm_bandwidth_gbps, 4800);
  EXPECT_DOUBLE_EQ(h200.gpu.max_matmul_efficiency(Precision::Fp8), 0.734);

  const NodeSpec h800 = *find_node_preset("hgx-h800");
  EXPECT_DOUBLE_EQ(h800.intra.link_bandwidth_gbps, 200) << "400 GB/s bidirectional";
  EXPECT_DOUBLE_EQ(peak(h800, Precision::Bf16), peak(h100, Precision::Bf16));
  EXPECT_EQ(h800.inter.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(h800.inter.nic_gbit_per_s, 400);

  const NodeSpec b200 = *find_node_preset("dgx-b200");
  EXPECT_DOUBLE_EQ(peak(b200, Precision::Bf16), 2250);
  EXPECT_DOUBLE_EQ(peak(b200, Precision::Fp8), 4500);
  EXPECT_DOUBLE_EQ(b200.intra.link_bandwidth_gbps, 900);
  EXPECT_NEAR(b200.gpu.memory_gib, 179, 0.5);
  EXPECT_NEAR(b200.intra.busbw_efficiency * 900, 682, 1) << "measured 8xB200 ring busbw";

  const NodeSpec gb200 = *find_node_preset("gb200-nvl72");
  EXPECT_EQ(gb200.gpus_per_node, 72);
  EXPECT_EQ(gb200.intra.fabric, IntraFabric::Switch);
  EXPECT_EQ(gb200.inter.nics_per_node, 72) << "4 CX-7 per tray of 4 GPUs, 18 trays";
  EXPECT_DOUBLE_EQ(peak(gb200, Precision::Bf16), 2500);

  const NodeSpec xe = *find_node_preset("xe9680-h100");
  EXPECT_EQ(xe.gpus_per_node, 8);
  EXPECT_EQ(xe.intra.fabric, IntraFabric::Switch);
  EXPECT_DOUBLE_EQ(xe.intra.link_bandwidth_gbps, 450);

  const NodeSpec l40s = *find_node_preset("pcie-4x-l40s");
  EXPECT_EQ(l40s.gpus_per_node, 4);
  EXPECT_EQ(l40s.intra.fabric, IntraFabric::Pcie);
  EXPECT_EQ(l40s.intra.island_gpus, 1) << "no NVLink on L40S";
  EXPECT_DOUBLE_EQ(peak(l40s, Precision::Bf16), 362.05);

  const NodeSpec nvl = *find_node_preset("pcie-8x-h100-nvl");
  EXPECT_EQ(nvl.intra.fabric, IntraFabric::Pcie);
  EXPECT_EQ(nvl.intra.island_gpus, 2);
  EXPECT_DOUBLE_EQ(nvl.intra.island_bandwidth_gbps, 300) << "600 GB/s bridge, per direction";
  EXPECT_DOUBLE_EQ(nvl.intra.link_bandwidth_gbps, 63) << "PCIe Gen5 x16 per direction";

  const NodeSpec mi = *find_node_preset("mi300x-8x");
  EXPECT_EQ(mi.gpu.vendor, "amd");
  EXPECT_EQ(mi.intra.fabric, IntraFabric::Mesh);
  EXPECT_DOUBLE_EQ(mi.intra.link_bandwidth_gbps, 64) << "per peer per direction";
  EXPECT_NEAR(mi.intra.busbw_efficiency * 7 * 64, 312.9, 0.5) << "measured RCCL 8-GPU busbw";
  EXPECT_DOUBLE_EQ(mi.gpu.max_matmul_efficiency(Precision::Bf16), 0.514);
}

// `parplan nodes --json` lists the presets (the binary is built before core_test).
TEST(NodePresets, ParplanNodesListsContractPresets) {
  const std::string command = std::string(PARPLAN_BINARY) + " nodes --json";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << command;
  std::string out;
  char buffer[4096];
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, got);
  ASSERT_EQ(pclose(pipe), 0) << command;
  const Json list = parse_json(out, "parplan nodes --json");
  ASSERT_TRUE(list.is_array());
  std::set<std::string> listed;
  for (const auto& node : list) listed.insert(node.at("name").get<std::string>());
  for (const auto& name : kContractNodes) EXPECT_TRUE(listed.count(name)) << name;
  for (const auto& name : kServerNodes) EXPECT_TRUE(listed.count(name)) << name;
}

TEST(ModelPresets, EveryPresetParsesAndCitesItsSource) {
  for (const auto& file : embedded_model_files()) {
    SCOPED_TRACE(std::string(file.path));
    const ModelSpec m = *find_model_preset(file.name);
    EXPECT_EQ(m.name, file.name);
    const Json raw = parse_json(file.text, std::string(file.path));
    ASSERT_TRUE(raw.contains("source"));
    EXPECT_FALSE(raw.at("source").get<std::string>().empty());
    ASSERT_TRUE(raw.contains("description"));
  }
}

struct Published {
  const char* preset;
  double total_b;      // published total parameters, billions
  double active_b;     // published active parameters (MoE), 0 when dense
  int64_t seq_length;  // for learned position embeddings
  double tolerance;    // relative
};

// Published counts: GPT-3 174.6B (Narayanan et al. 2021 §5.1 formula); Llama 2 model card
// 6.74/13.0/69.0B (HF transformers counts 6,738,415,616 / 13,015,864,320 / 68,976,648,192);
// Llama 3.1 model card 8.03/70.6/405.9B (HF: 8,030,261,248 / 70,553,706,496 / 405,853,388,800);
// Mistral 7B 7.24B (HF count); Mixtral paper/announcements 46.7B total, 12.9B active and
// 141B (HF: 140.6B) / 39.1B active; Qwen2.5 report 72.7B; Nemotron-4 340B report 341B;
// BLOOM model card 176,247,271,424; DeepSeek-V3 report 671B total, 37B activated; Qwen3 model
// card 30.5B total, 3.3B activated.
const Published kPublished[] = {
    {"gpt3-175b", 174.6, 0, 2048, 0.015},
    {"llama2-7b", 6.74, 0, 4096, 0.015},
    {"llama2-13b", 13.0, 0, 4096, 0.015},
    {"llama2-70b", 69.0, 0, 4096, 0.015},
    {"llama3.1-8b", 8.03, 0, 8192, 0.015},
    {"llama3.1-70b", 70.6, 0, 8192, 0.015},
    {"llama3.1-405b", 405.9, 0, 8192, 0.015},
    {"mistral-7b", 7.24, 0, 8192, 0.015},
    {"mixtral-8x7b", 46.7, 12.9, 4096, 0.015},
    {"mixtral-8x22b", 140.6, 39.1, 4096, 0.015},
    {"qwen2.5-72b", 72.7, 0, 4096, 0.015},
    {"nemotron4-340b", 341.0, 0, 4096, 0.015},
    {"bloom-176b", 176.2, 0, 2048, 0.015},
    // Our DeepSeek-V3 active count is 37.55B against the reported "37B" (1.49%): the report
    // rounds to whole billions. The total (671.03B) matches to 0.004%.
    {"deepseek-v3", 671.0, 37.0, 4096, 0.015},
};

TEST(ModelPresets, ParameterCountsMatchPublished) {
  for (const auto& p : kPublished) {
    SCOPED_TRACE(p.preset);
    const auto m = find_model_preset(p.preset);
    ASSERT_TRUE(m.has_value());
    const double total = static_cast<double>(m->total_params(p.seq_length)) / 1e9;
    EXPECT_NEAR(total / p.total_b, 1.0, p.tolerance) << "total " << total << "B";
    const double active = static_cast<double>(m->active_params(p.seq_length)) / 1e9;
    if (p.active_b > 0) {
      EXPECT_NEAR(active / p.active_b, 1.0, p.tolerance) << "active " << active << "B";
    } else {
      EXPECT_EQ(m->total_params(p.seq_length), m->active_params(p.seq_length));
    }
  }
}

TEST(ModelPresets, Qwen3MoeCountsMatchModelCard) {
  const ModelSpec m = *find_model_preset("qwen3-30b-a3b");
  EXPECT_NEAR(static_cast<double>(m.total_params(4096)) / 30.5e9, 1.0, 0.015);
  // Active: ours 3.353B, the model card says "3.3B": two significant digits, so only values
  // in [3.25, 3.35) print as 3.3B; ours is 0.003B above that band. Checked to 2%.
  EXPECT_NEAR(static_cast<double>(m.active_params(4096)) / 3.3e9, 1.0, 0.02);
  EXPECT_EQ(m.num_moe_layers(), 48);
  EXPECT_EQ(m.query_width(), 4096) << "32 heads of 128 exceed hidden 2048";
}

// Exact agreement where the published count is exact: transformers counts linear biases
// (and BLOOM's embedding LayerNorm), which ModelSpec leaves out by design.
TEST(ModelPresets, BloomExactCountDiffersOnlyByBiases) {
  const ModelSpec m = *find_model_preset("bloom-176b");
  const int64_t h = m.hidden_size;
  const int64_t biases_per_layer = 3 * h + h + 4 * h + h;  // QKV, dense, fc1 (4h), fc2
  const int64_t embedding_layernorm = 2 * h;
  EXPECT_EQ(m.total_params(2048) + m.num_layers * biases_per_layer + embedding_layernorm,
            176'247'271'424LL);  // BLOOM model card "Number of Parameters"
}

TEST(ModelPresets, DeepSeekV3HasMlaAndThreeDenseLayers) {
  const ModelSpec m = *find_model_preset("deepseek-v3");
  ASSERT_TRUE(m.mla.has_value());
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_TRUE(m.is_moe_layer(3));
  EXPECT_EQ(m.num_moe_layers(), 58);
  // MLA per layer (DeepSeek-V2 §2.1.2): 7168*1536 + 1536*128*192 + 7168*(512+64)
  // + 512*128*(128+128) + 128*128*7168.
  EXPECT_EQ(m.attention_params(), 187'105'280LL);
}

}  // namespace
}  // namespace parplan
