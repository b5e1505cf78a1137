#include "tools/published_runs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/check.h"
#include "core/units.h"

namespace parplan::tools {

PublishedRun parse_published_run(const Json& entry, std::size_t index, const std::string& path,
                                 const std::string& where, const std::string& base) {
  JsonReader in(entry, path, where);
  PublishedRun run;
  run.index = index;
  run.id = in.string_or("id", where);
  const Json* job = in.find("job");
  if (job == nullptr) in.fail("job", "nothing (the key is missing)", "a job object");
  run.job = parse_job(*job, path + " " + where + ".job", base);
  JsonReader ref = in.object("reference");
  run.reference_step_time_s = ref.require_number("step_time_s", 1e-9, 1e9);
  run.reference_memory_gib = ref.optional_number("memory_gib", 0, 1e6);
  ref.allow("how");
  ref.allow("memory_how");
  run.uncertain = in.bool_or("uncertain", false);
  for (const char* key : {"source", "assumptions", "notes"}) in.allow(key);
  // The job is checked strictly (parse_job); extra metadata around it (a tag, another
  // reference figure) is left aside rather than costing the run.
  run.ignored_keys = in.unknown_key_paths();
  for (auto& key : ref.unknown_key_paths()) run.ignored_keys.push_back(std::move(key));
  const auto& p = run.job.plan;
  run.core = !run.job.model.moe && p.cp == 1 && p.zero_stage < 3;
  return run;
}

namespace {

// The entry's id when it has a readable one, else its position.
std::string id_of(const Json& entry, const std::string& where) {
  if (entry.is_object() && entry.contains("id") && entry["id"].is_string()) {
    return entry["id"].get<std::string>();
  }
  return where;
}

}  // namespace

PublishedRuns load_published_runs(const std::string& path) {
  const Json root = load_json_file(path);
  if (!root.is_array()) {
    throw InputError(path, "(top level)", describe_json_value(root), "a JSON array of runs");
  }
  const std::string base = std::filesystem::path(path).parent_path().string();
  PublishedRuns out;
  for (std::size_t i = 0; i < root.size(); ++i) {
    const std::string where = "[" + std::to_string(i) + "]";
    try {
      out.runs.push_back(parse_published_run(root[i], i, path, where, base));
    } catch (const Error& e) {
      out.rejected.push_back({i, id_of(root[i], where), e.what()});
    }
  }
  return out;
}

std::vector<RunResult> predict_runs(const std::vector<PublishedRun>& runs,
                                    std::vector<RejectedRun>& rejected) {
  std::vector<RunResult> out;
  for (const auto& run : runs) {
    RunResult r;
    r.run = &run;
    try {
      r.estimate = cost::estimate_step(run.job);
    } catch (const Error& e) {
      rejected.push_back({run.index, run.id, e.what()});
      continue;
    }
    r.step_error = r.estimate.step_time_s / run.reference_step_time_s - 1.0;
    if (run.reference_memory_gib) {
      r.memory_error = r.estimate.memory.peak_bytes / kGiB / *run.reference_memory_gib - 1.0;
    }
    out.push_back(r);
  }
  return out;
}

ErrorStats error_stats(std::vector<double> errors) {
  ErrorStats s;
  if (errors.empty()) return s;
  for (auto& e : errors) e = std::fabs(e);
  std::sort(errors.begin(), errors.end());
  s.count = static_cast<int>(errors.size());
  double sum = 0;
  for (double e : errors) sum += e;
  s.mape = sum / static_cast<double>(errors.size());
  const std::size_t n = errors.size();
  s.median_ape = n % 2 == 1 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
  // Nearest-rank percentile.
  const std::size_t rank90 = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90_ape = errors[std::min(n, std::max<std::size_t>(1, rank90)) - 1];
  s.max_ape = errors.back();
  return s;
}

}  // namespace parplan::tools
