// `parplan nodes`: lists the built-in node presets with their key figures.
#include <algorithm>
#include <cstdio>

#include "core/presets.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/text_table.h"

namespace parplan::tools {

void register_nodes(CLI::App& app) {
  auto* cmd = app.add_subcommand("nodes", "List the built-in node (server) presets");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print the presets as JSON");
  cmd->callback([json] {
    Json list = Json::array();
    TextTable table({"preset", "gpu", "gpus", "memory", "16-bit TF", "fp8 TF", "HBM TB/s",
                     "intra GB/s", "fabric", "network"});
    for (const auto& name : node_preset_names()) {
      const NodeSpec n = *find_node_preset(name);
      list.push_back(node_spec_to_json(n));
      const double fp8 = n.gpu.peak_tflops(Precision::Fp8);
      // Volta has fp16 tensor cores only: the 16-bit column is the faster of bf16 and fp16.
      const double half =
          std::max(n.gpu.peak_tflops(Precision::Bf16), n.gpu.peak_tflops(Precision::Fp16));
      table.add_row({name, n.gpu.name, std::to_string(n.gpus_per_node),
                     fixed(n.gpu.memory_gib, 0) + " GiB", fixed(half, 0),
                     fp8 > 0 ? fixed(fp8, 0) : "-", fixed(n.gpu.hbm_bandwidth_gbps / 1000.0, 2),
                     fixed(n.intra.link_bandwidth_gbps, 0), to_string(n.intra.fabric),
                     std::to_string(n.inter.nics_per_node) + "x" +
                         fixed(n.inter.nic_gbit_per_s, 0) + " Gb/s"});
    }
    if (*json) {
      print_json(list);
    } else {
      std::fputs(table.render({2, 3, 4, 5, 6, 7}).c_str(), stdout);
      std::fputs("Intra GB/s is per GPU and direction. Use a preset as cluster.node in a job.\n",
                 stdout);
    }
  });
}

}  // namespace parplan::tools
