// Builds the validation error model (planner/error_model.h) from validation files (the format
// of tests/data/published_runs.json): every run is predicted and its log residuals
// log(predicted / reference) are stored with its features, then the leave-one-family-out
// coverage of the intervals it gives is measured and stored beside them. Run by
// `parplan validate --published FILE... --write-error-model OUT` (tools/error_model.sh);
// tests/tools/error_model_file_test.cpp checks that planner/data/error_model.json is current.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/json_input.h"
#include "planner/error_model.h"

namespace parplan::tools {

// Entries a file cannot read or the model cannot predict are left out (named on stderr); a run
// whose id an earlier file already gave counts once.
// `file_of_run`, when given, receives the file each counted run came from (by run id).
planner::ErrorModel build_error_model(const std::vector<std::string>& files,
                                      std::map<std::string, std::string>* file_of_run = nullptr);

// The model's JSON with its leave-one-family-out check ("leave_one_family_out"), over all runs
// and over each source file's runs ("by_file": the runs `file_of_run` assigns to it).
Json error_model_file_json(const planner::ErrorModel& model,
                           const std::map<std::string, std::string>& file_of_run = {});

// Writes OUT atomically and prints the check's numbers.
void write_error_model(const std::vector<std::string>& files, const std::string& out);

}  // namespace parplan::tools
