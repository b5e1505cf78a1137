#include "tools/calibration_runs.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/check.h"
#include "core/plural.h"
#include "tools/published_runs.h"

namespace parplan::tools {

namespace {

// FNV-1a, 64 bits (Fowler, Noll, Vo): identifies the runs file a calibration came from.
std::string fnv1a64(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char text[40];
  std::snprintf(text, sizeof text, "fnv1a64:%016" PRIx64, h);
  return text;
}

cost::CalibrationSample sample_of(const PublishedRun& run) {
  return {run.id, run.job, run.reference_step_time_s, run.reference_memory_gib};
}

// One run of `validate --run --json` as a published-runs entry, its figures checked under
// their own key paths.
Json published_entry(const Json& run, const std::string& path, const std::string& where) {
  JsonReader in(run, path, where);
  const std::string id = in.has("id") ? in.require_string("id") : in.require_string("label");
  const Json* job = in.find("job");
  if (job == nullptr) {
    in.fail("job", "nothing (the key is missing)",
            "the run's job (written by `parplan validate --run --json` of this version)");
  }
  Json reference = {{"step_time_s", in.require_number("reference_step_time_s", 1e-9, 1e9)}};
  if (const auto memory = in.optional_number("reference_memory_gib", 0, 1e6)) {
    reference["memory_gib"] = *memory;
  }
  return {{"id", id}, {"job", *job}, {"reference", reference}};
}

// The entries of the file as published-runs entries, with their positions ("[3]",
// "runs[3]"); oversubscribed runs of validate --run are counted in `left_out`.
std::vector<std::pair<Json, std::string>> entries_of(const Json& root, const std::string& path,
                                                     std::size_t& left_out) {
  std::vector<std::pair<Json, std::string>> out;
  if (root.is_array()) {
    for (std::size_t i = 0; i < root.size(); ++i) {
      out.emplace_back(root[i], "[" + std::to_string(i) + "]");
    }
    return out;
  }
  if (!root.is_object() || !root.contains("runs") || !root["runs"].is_array()) {
    throw InputError(path, "(top level)", describe_json_value(root),
                     "a JSON array of published runs, or the object `parplan validate --run "
                     "--json` writes (with \"runs\")");
  }
  const Json& runs = root["runs"];
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string where = "runs[" + std::to_string(i) + "]";
    if (runs[i].is_object() && runs[i].value("oversubscribed", false)) {
      ++left_out;
      continue;
    }
    out.emplace_back(published_entry(runs[i], path, where), where);
  }
  return out;
}

}  // namespace

CalibrationRuns load_calibration_runs(const std::string& path, const std::string& node) {
  CalibrationRuns out;
  out.path = path;
  out.hash = fnv1a64(read_text_file(path));
  const Json root = load_json_file(path);
  const std::string base = std::filesystem::path(path).parent_path().string();
  const auto entries = entries_of(root, path, out.left_out);
  if (entries.empty()) {
    throw InputError(path, root.is_array() ? "(top level)" : "runs", "no runs",
                     "at least 3 measured runs");
  }
  std::map<std::string, std::string> first_at;              // id -> where
  std::map<std::string, std::vector<std::string>> by_node;  // node -> ids
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& [entry, where] = entries[i];
    PublishedRun run = parse_published_run(entry, i, path, where, base);
    const auto [it, fresh] = first_at.emplace(run.id, where);
    if (!fresh) {
      throw InputError(path, where + ".id", "\"" + run.id + "\", the id of " + it->second,
                       "an id no other run has");
    }
    const std::string& type = run.job.cluster.node.name;
    by_node[type].push_back(run.id);
    if (!node.empty() && type != node) {
      ++out.left_out;
      continue;
    }
    out.samples.push_back(sample_of(run));
  }
  std::string types;
  for (const auto& [type, ids] : by_node) {
    types += (types.empty() ? "" : "; ") + type + " (" +
             count_of(static_cast<int64_t>(ids.size()), "run") + ", first " + ids.front() + ")";
  }
  if (node.empty() && by_node.size() > 1) {
    throw InputError(
        path, "runs", "runs on " + std::to_string(by_node.size()) + " node types: " + types,
        "runs on one node type (a calibration holds for one); choose one with --node NAME");
  }
  if (!node.empty() && out.samples.empty()) {
    throw InputError(path, "--node", "no run on node " + node + "; the runs are on " + types,
                     "one of those node types");
  }
  out.node_types = {out.samples.front().job.cluster.node.name};
  return out;
}

}  // namespace parplan::tools
