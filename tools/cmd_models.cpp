// `parplan models`: lists the built-in model presets with their key figures.
#include <cstdio>

#include "core/presets.h"
#include "core/units.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/text_table.h"

namespace parplan::tools {

void register_models(CLI::App& app) {
  auto* cmd = app.add_subcommand("models", "List the built-in model presets");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print the presets as JSON");
  cmd->callback([json] {
    Json list = Json::array();
    TextTable table(
        {"preset", "params", "layers", "hidden", "heads/kv", "ffn", "vocab", "mlp", "moe"});
    for (const auto& name : model_preset_names()) {
      const ModelSpec m = *find_model_preset(name);
      const double params_b = static_cast<double>(m.total_params(4096)) / kGiga;
      Json entry = model_spec_to_json(m);
      entry["preset"] = name;
      entry["total_params"] = m.total_params(4096);
      entry["active_params"] = m.active_params(4096);
      list.push_back(entry);
      std::string moe = "-";
      if (m.moe) {
        moe = std::to_string(m.moe->num_experts) + "x top" + std::to_string(m.moe->top_k);
      }
      table.add_row(
          {name, fixed(params_b, 1) + "B", std::to_string(m.num_layers),
           std::to_string(m.hidden_size),
           std::to_string(m.num_attention_heads) + "/" + std::to_string(m.num_query_groups),
           std::to_string(m.ffn_hidden_size), std::to_string(m.vocab_size), to_string(m.activation),
           moe});
    }
    if (*json) {
      print_json(list);
    } else {
      std::fputs(table.render({1, 2, 3, 5, 6}).c_str(), stdout);
      std::fputs("Use a preset name as the job's \"model\", e.g. \"model\": \"llama3.1-70b\".\n",
                 stdout);
    }
  });
}

}  // namespace parplan::tools
