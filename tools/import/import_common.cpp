// SettingTable and the part of `parplan import` every format shares: the cluster, the model
// (a preset when the launch's shape is one), the plan's data-parallel size and split, and the
// check that the job file it writes is one parplan accepts.
#include <charconv>

#include "core/check.h"
#include "core/checked_int.h"
#include "core/job.h"
#include "core/presets.h"
#include "cost_models/framework_traits.h"
#include "cost_models/moe_dispatch.h"
#include "tools/import/import_job.h"

namespace parplan::tools {

SettingTable::SettingTable(std::vector<LaunchSetting> settings, std::string file)
    : settings_(std::move(settings)), read_(settings_.size(), false), file_(std::move(file)) {}

const LaunchSetting* SettingTable::get(std::string_view key) {
  const LaunchSetting* found = nullptr;
  for (std::size_t i = 0; i < settings_.size(); ++i) {
    if (settings_[i].key == key) {
      read_[i] = true;
      found = &settings_[i];
    }
  }
  return found;
}

std::optional<std::string> SettingTable::text(std::string_view key) {
  const LaunchSetting* s = get(key);
  if (!s) return std::nullopt;
  return s->value;
}

namespace {
// A shell variable, a <PLACEHOLDER> or YAML's null: the launch leaves the value open.
bool is_placeholder(const std::string& v) {
  return (!v.empty() && (v.front() == '$' || v.front() == '<')) || v == "null" || v == "~";
}
}  // namespace

namespace {
std::optional<int64_t> read_integer(const SettingTable& table, const LaunchSetting* s,
                                    int64_t least) {
  if (!s || is_placeholder(s->value)) return std::nullopt;
  int64_t v = 0;
  const auto* end = s->value.data() + s->value.size();
  const auto r = std::from_chars(s->value.data(), end, v);
  if (s->value.empty() || r.ec != std::errc() || r.ptr != end || v < least ||
      v > kMaxLaunchInteger) {
    table.fail(*s, s->value.empty() ? "no value" : s->value,
               std::string(least > 0 ? "a positive integer" : "an integer >= 0") + " up to " +
                   std::to_string(kMaxLaunchInteger));
  }
  return v;
}
}  // namespace

std::optional<int64_t> parse_launch_count(std::string_view digits) {
  int64_t v = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size() || v < 0 ||
      v > kMaxLaunchInteger) {
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> SettingTable::integer(std::string_view key) {
  return read_integer(*this, get(key), 1);
}

std::optional<int64_t> SettingTable::count(std::string_view key) {
  return read_integer(*this, get(key), 0);
}

std::optional<double> SettingTable::number(std::string_view key) {
  const LaunchSetting* s = get(key);
  if (!s || is_placeholder(s->value)) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s->value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s->value.size()) fail(*s, s->value, "a number");
  return v;
}

std::optional<bool> SettingTable::boolean(std::string_view key) {
  const LaunchSetting* s = get(key);
  if (!s) return std::nullopt;
  if (s->value == "true" || s->value == "True") return true;
  if (s->value == "false" || s->value == "False") return false;
  fail(*s, s->value.empty() ? "no value" : s->value, "true or false");
}

int64_t SettingTable::required_integer(std::string_view key) {
  if (auto v = integer(key)) return *v;
  throw InputError(file_, std::string(key), "nothing",
                   "a positive integer (the launch must set it)");
}

void SettingTable::mark_read_prefix(std::string_view prefix) {
  for (std::size_t i = 0; i < settings_.size(); ++i) {
    if (settings_[i].key.rfind(prefix, 0) == 0) read_[i] = true;
  }
}

std::vector<std::string> SettingTable::unread() const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < settings_.size(); ++i) {
    if (!read_[i])
      out.push_back(file_ + ":" + std::to_string(settings_[i].line) + ": " + settings_[i].key);
  }
  return out;
}

void SettingTable::fail(const LaunchSetting& setting, const std::string& found,
                        const std::string& allowed) const {
  throw InputError(file_ + ":" + std::to_string(setting.line), setting.key, found, allowed);
}

void record_moe_dispatch(ImportDraft& d, const std::optional<std::string>& dispatcher,
                         const std::string& allgather_source, bool overlap, bool delay_wgrad,
                         const std::string& delay_wgrad_key) {
  if (dispatcher == "allgather") {
    if (d.plan["ep"].get<int64_t>() > 1) {
      d.moe_dispatcher = "alltoall";
      d.notes.push_back("plan.moe_dispatcher: the launch dispatches MoE tokens with allgather (" +
                        allgather_source + "); parplan models the all-to-all");
    }
  } else if (dispatcher) {
    d.moe_dispatcher = *dispatcher;
  }
  if (overlap) d.plan["moe_a2a_overlap"] = true;
  if (overlap && !delay_wgrad) {
    d.notes.push_back("plan.moe_a2a_overlap: the launch overlaps without " + delay_wgrad_key +
                      "; parplan's model of the overlap assumes it");
  }
}

std::optional<std::pair<int64_t, int64_t>> moe_placement(const std::vector<int>& pattern) {
  int64_t first = 0;
  while (first < static_cast<int64_t>(pattern.size()) && pattern[first] == 0) ++first;
  if (first == static_cast<int64_t>(pattern.size())) return std::nullopt;
  int64_t frequency = 1;
  while (first + frequency < static_cast<int64_t>(pattern.size()) &&
         pattern[first + frequency] == 0) {
    ++frequency;
  }
  if (first + frequency == static_cast<int64_t>(pattern.size())) {
    frequency = static_cast<int64_t>(pattern.size());  // a single MoE layer
  }
  for (int64_t l = 0; l < static_cast<int64_t>(pattern.size()); ++l) {
    const bool moe = l >= first && (l - first) % frequency == 0;
    if (moe != (pattern[l] == 1)) return std::nullopt;
  }
  return std::pair{first, frequency};
}

namespace {

// A model's shape as JSON for comparing a launch with the presets: no name; the shared
// experts as one width; the vocabulary only when the launch gives it.
Json comparable(const ModelSpec& m, bool with_vocab) {
  Json j = model_spec_to_json(m);
  j.erase("name");
  j["qkv_bias"] = m.qkv_bias || m.linear_bias;  // biases everywhere include the qkv ones
  if (!with_vocab) j.erase("vocab_size");
  if (m.mla) j.erase("head_dim");  // MLA's heads are the mla widths
  if (m.moe) {
    const int64_t shared = m.moe->shared_expert_ffn_hidden_size > 0
                               ? m.moe->shared_expert_ffn_hidden_size
                               : m.moe->num_shared_experts * m.moe->expert_ffn_hidden_size;
    j["moe"].erase("num_shared_experts");
    j["moe"]["shared_expert_ffn_hidden_size"] = shared;
  }
  return j;
}

// The preset name when exactly the launch's model is a preset, else the inline model.
Json settle_model(ImportDraft& d, const ImportOptions& o, const std::string& file) {
  if (!d.model_preset.empty()) return d.model_preset;
  Json inline_model = d.model;
  inline_model["name"] = "imported from " + file;
  if (o.vocab_size) inline_model["vocab_size"] = *o.vocab_size;
  const bool vocab_known = inline_model.contains("vocab_size");
  if (!vocab_known) inline_model["vocab_size"] = 32000;  // only to compare shapes below
  const ModelSpec mine = parse_model_spec(inline_model, file, "model");
  const Json shape = comparable(mine, vocab_known);
  for (const std::string& name : model_preset_names()) {
    const auto preset = find_model_preset(name);
    if (preset && comparable(*preset, vocab_known) == shape) {
      d.notes.push_back("model: the launch's shape is the preset " + name);
      return name;
    }
  }
  if (!vocab_known) {
    throw InputError(file, "model.vocab_size",
                     "no vocabulary size (the tokenizer holds it) "
                     "and a shape that is no preset's",
                     "--vocab-size N");
  }
  return inline_model;
}

// Where the launch differs from what parplan's model assumes of the framework, say so: the
// prediction is then for the launch as parplan would run it.
void note_assumptions(ImportDraft& d, const Job& job) {
  const ParallelPlan& p = job.plan;
  if (d.expert_tp && job.model.moe && *d.expert_tp != p.expert_tp()) {
    d.notes.push_back("plan: the launch's expert tensor-parallel size is " +
                      std::to_string(*d.expert_tp) + "; parplan models " +
                      std::to_string(p.expert_tp()));
  }
  const auto traits = cost::framework_traits(job.framework, job.training, p);
  // What parplan would launch for this plan (launch::fp8_launch): fp8 parameters where the
  // model counts them and the optimizer is sharded.
  const launch::Fp8Launch fp8 = launch::fp8_launch(job);
  // "the launch keeps X; parplan's model for this GPU and plan does not", or the reverse.
  const auto note_fp8_difference = [&](bool launch_does, const char* does, const char* does_not,
                                       const char* what) {
    d.notes.push_back(
        std::string("training.precision fp8: the launch ") + (launch_does ? does : does_not) +
        what + "; parplan's model for this GPU and plan " + (launch_does ? "does not" : "does"));
  };
  if (d.fp8_param_gather && *d.fp8_param_gather != fp8.param_gather) {
    note_fp8_difference(*d.fp8_param_gather, "keeps", "does not keep",
                        " the parameters in fp8 (fp8_param_gather)");
  }
  // Megatron-FSDP (ZeRO 2 and 3 in the exports) turns the gradient-buffer reuse off itself.
  if (d.fp8_reuse_grad_buf && p.zero_stage == 1 &&
      *d.fp8_reuse_grad_buf != fp8.reuse_grad_buf_for_param_gather) {
    note_fp8_difference(*d.fp8_reuse_grad_buf, "gathers", "does not gather",
                        " MXFP8 parameters through the gradient buffer");
  }
  if (p.dp > 1 && traits.overlap_dp_grad_reduce && !d.overlaps_grad_reduce) {
    d.notes.push_back(
        "the launch does not overlap the gradient reduction with the backward "
        "pass; parplan's " +
        std::string(to_string(job.framework)) +
        " model assumes it does (the prediction is faster than this launch)");
  }
  if (p.dp > 1 && p.zero_stage >= 1 && traits.overlap_param_gather && !d.overlaps_param_gather) {
    d.notes.push_back(
        "the launch does not overlap the parameter all-gather; parplan's model "
        "assumes it does (the prediction is faster than this launch)");
  }
}

}  // namespace

ImportResult import_launch(ExportFormat format, std::string_view text, const std::string& file,
                           const ImportOptions& o) {
  std::vector<LaunchSetting> settings;
  switch (format) {
    case ExportFormat::Megatron:
      settings = read_megatron_arguments(text, file);
      break;
    case ExportFormat::Nemo:
      settings = read_yaml_settings(text, file);
      break;
    case ExportFormat::Torchtitan:
      settings = read_toml_settings(text, file);
      break;
  }
  SettingTable s(std::move(settings), file);
  const NodeSpec node = resolve_node(o.node, "--node", "node", o.base_dir);
  ImportDraft d = format == ExportFormat::Megatron ? read_megatron_launch(s)
                  : format == ExportFormat::Nemo
                      ? read_nemo_launch(s)
                      : read_torchtitan_launch(s, o.num_nodes.value_or(0) * node.gpus_per_node);
  const int64_t per_node = d.gpus_per_node > 0 ? d.gpus_per_node : node.gpus_per_node;
  int64_t nodes = o.num_nodes.value_or(d.num_nodes);
  if (nodes == 0 && d.num_gpus > 0 && d.num_gpus % per_node == 0) nodes = d.num_gpus / per_node;
  if (nodes == 0) {
    throw InputError(file, "cluster.num_nodes", "no node count in the launch",
                     "--nodes N (or torchrun --nnodes / every parallel degree in the file)");
  }
  Json cluster = {{"node", o.node}, {"num_nodes", nodes}};
  if (per_node != node.gpus_per_node) cluster["gpus_used_per_node"] = per_node;
  const int64_t gpus = nodes * per_node;
  const int64_t model_parallel =
      saturating_product({d.plan.value("tp", int64_t{1}), d.plan.value("pp", int64_t{1}),
                          d.plan.value("cp", int64_t{1})});
  if (gpus % model_parallel != 0) {
    throw InputError(
        file, "plan",
        std::to_string(gpus) + " GPUs over tp*pp*cp = " + std::to_string(model_parallel),
        "a GPU count divisible by tp*pp*cp");
  }
  d.plan["dp"] = gpus / model_parallel;
  if (d.optimizer_instances > 1) {
    d.plan["zero_shard_size"] = gpus / model_parallel / d.optimizer_instances;
  }
  Json job = {{"framework", d.framework},
              {"model", settle_model(d, o, file)},
              {"cluster", cluster},
              {"training", d.training},
              {"plan", d.plan}};
  // The explicit split and the experts' tensor-parallel size (plan key etp) only where they
  // are not what parplan derives by itself (layers_per_chunk, ParallelPlan::expert_tp).
  if (!d.chunk_layers.empty() || d.expert_tp) {
    const Job derived = parse_job(job, file, o.base_dir, PlanCheck::Skip);
    if (!d.chunk_layers.empty() &&
        layers_per_chunk(derived.model, derived.plan) != d.chunk_layers) {
      job["plan"]["layers_per_stage"] = d.chunk_layers;
    }
    if (d.expert_tp && derived.model.moe && derived.plan.expert_tp() != *d.expert_tp) {
      job["plan"]["etp"] = *d.expert_tp;
    }
  }
  // The MoE dispatcher only where the framework's "auto" does not pick it for this plan
  // (cost::resolved_moe_dispatcher), so that "auto" plans come back as they were.
  if (d.moe_dispatcher) {
    const Job derived = parse_job(job, file, o.base_dir, PlanCheck::Skip);
    if (derived.model.moe &&
        *d.moe_dispatcher != to_string(cost::resolved_moe_dispatcher(derived))) {
      job["plan"]["moe_dispatcher"] = *d.moe_dispatcher;
    }
  }
  const Job checked = parse_job(job, file, o.base_dir, PlanCheck::Enforce);  // or the error
  note_assumptions(d, checked);
  return {job, s.unread(), d.notes};
}

}  // namespace parplan::tools
