// `--calibration CAL.json` of simulate, plan, compare and validate: loads a calibration
// written by `parplan calibrate` (core/calibration.h), applies it to a job on a node type it
// was fitted on, and says so in every output (a text line, a "calibration" JSON key).
// Tested in tests/tools/calibrate_cli_test.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "core/calibration.h"
#include "core/job.h"
#include "tools/calibration_text.h"

namespace parplan::tools {

void add_calibration_option(CLI::App* cmd, std::string& path);

// Loads the file named by --calibration; nothing for an empty path.
std::optional<CalibrationFile> load_calibration_option(const std::string& path);

// Whether the calibration was fitted on the job's node type.
bool calibration_applies(const CalibrationFile& file, const Job& job);

// Applies the calibration to the job (an error when the job's node type is not one it was
// fitted on); no-op without one. Apply after --profile: it scales the node the job runs on.
void apply_calibration(Job& job, const std::optional<CalibrationFile>& file);

// Loads and applies --calibration in one go; returns what was loaded (for the outputs).
std::optional<CalibrationFile> apply_calibration_option(Job& job, const std::string& path);

// Adds "calibration": {file, factors, node_types} to a JSON output when one was used.
void add_calibration_key(Json& out, const std::optional<CalibrationFile>& file);

// "calibration: CAL.json (node dgx-h100): compute_throughput_fraction 0.912, ..." or "".
std::string calibration_line(const std::optional<CalibrationFile>& file);

}  // namespace parplan::tools
