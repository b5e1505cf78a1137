#include "tools/calibration_option.h"

#include <algorithm>
#include <cstdio>

#include "core/check.h"

namespace parplan::tools {

void add_calibration_option(CLI::App* cmd, std::string& path) {
  cmd->add_option("--calibration", path,
                  "Calibration fitted to measured runs (parplan calibrate) applied to the "
                  "cost model");
}

std::optional<CalibrationFile> load_calibration_option(const std::string& path) {
  if (path.empty()) return std::nullopt;
  return load_calibration_file(path);
}

bool calibration_applies(const CalibrationFile& file, const Job& job) {
  return std::find(file.node_types.begin(), file.node_types.end(), job.cluster.node.name) !=
         file.node_types.end();
}

void apply_calibration(Job& job, const std::optional<CalibrationFile>& file) {
  if (!file) return;
  if (!calibration_applies(*file, job)) {
    std::string types;
    for (const auto& t : file->node_types) types += (types.empty() ? "" : ", ") + t;
    throw InputError(file->path, "node_types", types,
                     "the node type of " + job.file + " (" + job.cluster.node.name +
                         "): a calibration holds for the node type its runs ran on");
  }
  job = calibrated_job(job, file->factors);
}

std::optional<CalibrationFile> apply_calibration_option(Job& job, const std::string& path) {
  auto file = load_calibration_option(path);
  apply_calibration(job, file);
  return file;
}

void add_calibration_key(Json& out, const std::optional<CalibrationFile>& file) {
  if (file) out["calibration"] = calibration_summary_json(*file);
}

std::string calibration_line(const std::optional<CalibrationFile>& file) {
  if (!file) return "";
  std::string types;
  for (const auto& t : file->node_types) types += (types.empty() ? "" : ", ") + t;
  const std::string factors = calibration_factors_text(file->factors);
  return "calibration: " + file->path + " (node " + types +
         "): " + (factors.empty() ? "identity (no factor fitted)" : factors);
}

}  // namespace parplan::tools
