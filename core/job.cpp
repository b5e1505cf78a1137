#include "core/job.h"

#include <algorithm>
#include <filesystem>

#include "core/check.h"
#include "core/cluster_shape.h"
#include "core/frameworks/plan_defaults.h"
#include "core/frameworks/registry.h"
#include "core/hardware_profile.h"
#include "core/hf_config.h"
#include "core/node_suggestions.h"
#include "core/presets.h"

namespace parplan {

namespace {

namespace fs = std::filesystem;

// The largest cluster a job may name (num_gpus, or num_nodes x gpus_per_node).
constexpr int64_t kMaxClusterGpus = 100'000'000;

std::string resolve_path(const std::string& text, const std::string& base_dir) {
  fs::path path(text);
  if (path.is_relative() && !base_dir.empty()) path = fs::path(base_dir) / path;
  return path.lexically_normal().string();
}

bool looks_like_path(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".json");
}

// Never throws: a name too long for the file system, or a folder without permission, is
// "not an existing file" here; reading it reports the reason.
bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// True only when nothing is at `path`: a name too long for the file system, or a folder
// without permission, is left for the reader to report.
bool path_missing(const std::string& path) {
  std::error_code ec;
  return fs::status(path, ec).type() == fs::file_type::not_found;
}

// Reads the JSON file that the value at `key_path` of `file` names (`path`, resolved). A path
// that does not exist is an error about that key: the job names it, not the missing file.
Json load_named_file(const Json& value, const std::string& path, const std::string& file,
                     const std::string& key_path, const std::string& allowed) {
  if (path_missing(path)) {
    throw InputError(file, key_path, describe_json_value(value) + " (no such file: " + path + ")",
                     allowed);
  }
  return load_json_file(path);
}

// A sequence longer than the model was trained for is allowed (long-context training
// extends it, with RoPE scaling) but worth a word.
void warn_beyond_max_positions(Job& job) {
  const int64_t limit = job.model.max_position_embeddings;
  if (limit <= 0 || job.training.seq_length <= limit) return;
  job.warnings.push_back(job.file +
                         ": training.seq_length: " + std::to_string(job.training.seq_length) +
                         " is longer than the model's max_position_embeddings (" +
                         std::to_string(limit) + ", " + job.model.max_position_source +
                         "); the prediction assumes the model takes it (RoPE scaling or a "
                         "longer-context variant)");
}

// "meta-llama/Llama-3.1-8B" is a Hugging Face hub id, not a path: parplan reads no hub. Names
// the preset of that model when there is one.
std::string hub_id_hint(const std::string& text, const std::vector<std::string>& presets) {
  const bool hub_id = std::count(text.begin(), text.end(), '/') == 1 && !text.starts_with('.') &&
                      !text.ends_with(".json") && !text.ends_with('/');
  if (!hub_id) return "";
  const auto preset = suggest_keys(text.substr(text.find('/') + 1), presets);
  return " (a Hugging Face hub id is not read: download its config.json and give its path" +
         (preset.empty() ? std::string() : ", or name the preset " + quoted_alternatives(preset)) +
         ")";
}

// A folder named as the model: the Hugging Face checkpoint layout keeps config.json in it.
std::string model_file_in_folder(const Json& value, const std::string& path,
                                 const std::string& file, const std::string& key_path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  const std::string config = (fs::path(path) / "config.json").string();
  if (fs::is_regular_file(config, ec)) return config;
  throw InputError(file, key_path,
                   describe_json_value(value) + " (a folder without a config.json: " + path + ")",
                   "a preset, a model JSON file, a Hugging Face config.json or a folder holding "
                   "its config.json");
}

}  // namespace

ModelSpec resolve_model(const Json& value, const std::string& file, const std::string& key_path,
                        const std::string& base_dir) {
  if (value.is_object()) {
    if (is_hf_config(value)) return import_hf_config(value, file);
    return parse_model_spec(value, file, key_path);
  }
  if (!value.is_string()) {
    throw InputError(file, key_path, describe_json_value(value),
                     "a preset name, a path to a model JSON or config.json, or an object");
  }
  const std::string text = value.get<std::string>();
  if (!looks_like_path(text)) {
    if (auto preset = find_model_preset(text)) return *preset;
  }
  const std::string path =
      model_file_in_folder(value, resolve_path(text, base_dir), file, key_path);
  const auto names = model_preset_names();
  if (looks_like_path(text) || file_exists(path)) {
    const Json model = load_named_file(value, path, file, key_path,
                                       "a preset (" + join_names(names) +
                                           ") or a path to an existing JSON file or folder" +
                                           hub_id_hint(text, names));
    if (is_hf_config(model)) return import_hf_config(model, path);
    return parse_model_spec(model, path, "");
  }
  throw InputError(file, key_path, describe_json_value(value) + " (no such preset or file)",
                   "a preset (" + join_names(names) + ")" + nearest_key_hint(text, names) +
                       " or a path to a JSON file");
}

NodeSpec resolve_node(const Json& value, const std::string& file, const std::string& key_path,
                      const std::string& base_dir) {
  if (value.is_object()) return parse_node_spec(value, file, key_path);
  if (!value.is_string()) {
    throw InputError(file, key_path, describe_json_value(value),
                     "a node preset name, a path to a node JSON file, or an object");
  }
  const std::string text = value.get<std::string>();
  if (!looks_like_path(text)) {
    if (auto preset = find_node_preset(text)) return *preset;
  }
  const std::string path = resolve_path(text, base_dir);
  const auto names = node_preset_names();
  if (looks_like_path(text) || file_exists(path)) {
    const Json node = load_named_file(
        value, path, file, key_path,
        "a node preset (" + join_names(names) + ") or a path to an existing JSON file");
    // A measured profile (parplan profile --out) stands wherever a node file can.
    if (is_hardware_profile(node)) return parse_hardware_profile(node, path).node;
    return parse_node_spec(node, path, "");
  }
  throw InputError(file, key_path, describe_json_value(value) + " (no such preset or file)",
                   "a node preset (" + join_names(names) + ")" + node_preset_hint(text) +
                       " or a path to a JSON file");
}

ClusterSpec make_cluster(const NodeSpec& node, int64_t num_nodes, int64_t num_gpus) {
  ClusterSpec cluster;
  cluster.node = node;
  cluster.num_nodes = num_nodes;
  cluster.num_gpus = num_gpus;
  return cluster;
}

void throw_plan_violation(const PlanViolation& v, const std::string& file) {
  throw InputError(file, v.key_path, v.found, v.allowed);
}

// A framework that runs MoE with tensor parallelism only with sequence parallelism
// (PlannerSupport::moe_tp_needs_sp) rejects the plan at launch: so does the job.
void check_moe_sequence_parallel(const Job& job, const std::string& file) {
  const ParallelPlan& p = job.plan;
  const PlannerSupport& support = framework_info(job.framework).planner_support;
  if (!support.rejects_moe_without_sp(p, job.model.moe.has_value())) return;
  throw InputError(
      file, "plan.sequence_parallel", "false with a MoE model and tp = " + std::to_string(p.tp),
      std::string("true (") + to_string(job.framework) +
          " requires sequence parallelism for MoE with tensor parallelism), or tp = 1");
}

// Expandable segments configure PyTorch's caching allocator: a framework that allocates
// otherwise (XLA, parplan's executor) ignores the setting, and the user should know.
void warn_unused_expandable_segments(Job& job) {
  if (!job.training.expandable_segments.value_or(false)) return;
  if (framework_info(job.framework).cost_traits(job.training).pytorch_caching_allocator) return;
  job.warnings.push_back(job.file + ": training.expandable_segments: true has no effect with " +
                         to_string(job.framework) +
                         ", which does not allocate through PyTorch's caching allocator");
}

// torch.compile changes what runs only where the framework's modules are eager PyTorch.
void warn_unused_torch_compile(Job& job) {
  if (!job.training.compiles_model()) return;
  if (framework_info(job.framework).cost_traits(job.training).eager_modules_compilable) return;
  job.warnings.push_back(job.file + ": training.torch_compile: true has no effect with " +
                         to_string(job.framework) +
                         ", whose norm, rotary and activation kernels parplan costs as fused "
                         "already");
}

Job parse_job(const Json& object, const std::string& file, const std::string& base_dir,
              PlanCheck plan_check) {
  JsonReader in(object, file, "");
  Job job;
  job.file = file;
  in.allow("description");
  in.allow("comment");

  // A key given as null is a wrong value, not a missing key: `"plan": null` is an error, while
  // leaving "plan" out asks for the defaults (the same for framework's default).
  if (const Json* value = in.find("framework"); value != nullptr && value->is_null()) {
    in.fail("framework", "null", framework_choices());
  }
  const std::string framework = in.string_or("framework", "megatron-core");
  if (auto parsed = parse_framework(framework)) {
    job.framework = *parsed;
  } else {
    in.fail("framework", "\"" + framework + "\"", framework_choices());
  }

  const Json* model = in.find("model");
  if (model == nullptr)
    in.fail("model", "nothing (the key is missing)", "a model preset, path or object");
  job.model = resolve_model(*model, file, "model", base_dir);

  {
    JsonReader cluster = in.object("cluster");
    const Json* node_value = cluster.find("node");
    if (node_value == nullptr) {
      cluster.fail("node", "nothing (the key is missing)", "a node preset, path or object");
    }
    NodeSpec node = resolve_node(*node_value, file, "cluster.node", base_dir);
    const auto num_nodes = cluster.optional_int("num_nodes", 1, 10'000'000);
    const auto num_gpus = cluster.optional_int("num_gpus", 1, kMaxClusterGpus);
    // Part of each node (64 of an NVL72 rack's 72): the job sees nodes of that many GPUs.
    const int64_t installed = node.gpus_per_node;
    const auto used_per_node = cluster.optional_int("gpus_used_per_node", 1, installed);
    if (used_per_node) node.gpus_per_node = *used_per_node;
    cluster.finish();
    if (num_nodes && *num_nodes > kMaxClusterGpus / node.gpus_per_node) {
      cluster.fail("num_nodes", std::to_string(*num_nodes),
                   "at most " + std::to_string(kMaxClusterGpus / node.gpus_per_node) +
                       " nodes of " + std::to_string(node.gpus_per_node) + " GPUs (" +
                       std::to_string(kMaxClusterGpus) + " GPUs in all)");
    }
    if (num_nodes && num_gpus && *num_gpus != *num_nodes * node.gpus_per_node) {
      cluster.fail(
          "num_gpus", std::to_string(*num_gpus),
          "num_nodes * gpus_per_node = " + std::to_string(*num_nodes * node.gpus_per_node) +
              ", or give only one of num_nodes and num_gpus");
    }
    if (!num_nodes && !num_gpus) {
      cluster.fail("num_nodes", "neither num_nodes nor num_gpus", "one of them");
    }
    const int64_t gpus = num_gpus ? *num_gpus : *num_nodes * node.gpus_per_node;
    const int64_t nodes =
        num_nodes ? *num_nodes : (gpus + node.gpus_per_node - 1) / node.gpus_per_node;
    // Several nodes talk over their NICs: a node without any (a workstation) runs alone.
    if (nodes > 1 && (node.inter.nics_per_node == 0 || node.inter.nic_gbit_per_s <= 0)) {
      cluster.fail(num_nodes ? "num_nodes" : "num_gpus",
                   std::to_string(num_nodes ? *num_nodes : *num_gpus),
                   "one node's worth: node \"" + node.name +
                       "\" has no inter-node network (no inter_node, or its nics_per_node or "
                       "nic_gbit_per_s is 0)");
    }
    job.cluster = make_cluster(node, nodes, gpus);
    if (used_per_node && *used_per_node != installed) {
      job.cluster.installed_gpus_per_node = installed;
    }
    if (auto partial = partial_node_warning(job.cluster)) {
      job.warnings.push_back(file + ": cluster.num_gpus: " + *partial);
    }
  }

  const Json* training = in.find("training");
  if (training == nullptr) {
    in.fail("training", "nothing (the key is missing)",
            "an object with global_batch_size and seq_length");
  }
  job.training = parse_training_spec(*training, file, "training");
  warn_beyond_max_positions(job);
  warn_unused_expandable_segments(job);
  warn_unused_torch_compile(job);
  // fp8 training needs fp8 tensor cores (Hopper, Ada, Blackwell, MI300): Transformer Engine
  // refuses it elsewhere. Other precisions a GPU lacks run on its 16-bit tensor cores
  // (GpuSpec::computed_as: bf16 on a V100 is costed at its fp16 rate).
  if (job.training.precision == Precision::Fp8 &&
      job.cluster.node.gpu.peak_tflops(Precision::Fp8) <= 0) {
    throw InputError(file, "training.precision", "\"fp8\"",
                     "\"fp32\", \"fp16\" or \"bf16\" on " + job.cluster.node.gpu.name +
                         ", which has no fp8 tensor cores (node dense_tflops.fp8)");
  }

  if (const Json* plan = in.find("plan"); plan != nullptr) {
    if (plan->is_null()) {
      in.fail("plan", "null",
              "a JSON object of plan keys (tp, pp, dp, ...); leave \"plan\" out for the defaults");
    }
    job.plan = parse_parallel_plan(*plan, file, "plan", job.cluster.num_gpus,
                                   plan_check == PlanCheck::Skip);
    job.plan_given = true;
  } else {
    job.plan = parse_parallel_plan(Json::object(), file, "plan", job.cluster.num_gpus);
  }
  in.finish();
  apply_framework_plan_defaults(job.framework, job.plan, job.training);

  if (plan_check == PlanCheck::Enforce ||
      (plan_check == PlanCheck::EnforceIfGiven && job.plan_given)) {
    if (auto violation = check_plan(job.model, job.cluster, job.training, job.plan)) {
      throw_plan_violation(*violation, file);
    }
    check_moe_sequence_parallel(job, file);
  }
  return job;
}

Job load_job(const std::string& path, PlanCheck plan_check) {
  const Json object = load_json_file(path);
  const std::string base_dir = fs::path(path).parent_path().string();
  return parse_job(object, path, base_dir, plan_check);
}

Json job_to_json(const Job& job) {
  Json cluster = {{"node", job.cluster.node.name}, {"num_gpus", job.cluster.num_gpus}};
  if (job.cluster.installed_gpus_per_node > 0) {
    cluster["gpus_used_per_node"] = job.cluster.node.gpus_per_node;
  }
  return {{"framework", to_string(job.framework)},
          {"model", model_spec_to_json(job.model)},
          {"cluster", cluster},
          {"training", training_spec_to_json(job.training)},
          {"plan", parallel_plan_to_json(job.plan)}};
}

Job calibrated_job(const Job& job, const Calibration& calibration) {
  PARPLAN_CHECK(job.calibration.is_identity(), job.file,
                ": the job is calibrated already; a calibration applies once");
  Job out = job;
  out.cluster.node = calibrated_node(job.cluster.node, calibration);
  out.calibration = calibration;
  return out;
}

}  // namespace parplan
