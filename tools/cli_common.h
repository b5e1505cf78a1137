// Helpers shared by the subcommands: loading the job named by --job, printing JSON.
#pragma once

#include <string>

#include "core/job.h"
#include "core/json_input.h"

namespace parplan::tools {

// Prints JSON to stdout, pretty with two-space indentation, followed by a newline.
void print_json(const Json& value);

// Formats seconds for humans: "812 us", "45.2 ms", "3.21 s".
std::string human_seconds(double seconds);

}  // namespace parplan::tools
