// Helpers shared by the subcommands: loading the job named by --job, printing JSON.
#pragma once

#include <string>

#include "core/job.h"
#include "core/json_input.h"

namespace parplan::tools {

// Thrown to end the program with `code` without printing anything (e.g. on the MPI ranks
// other than 0 when rank 0 reports an error that every rank found).
struct QuietExit {
  int code = 1;
};

// Prints JSON to stdout, pretty with two-space indentation, followed by a newline.
void print_json(const Json& value);

// Formats seconds for humans: "812 us", "45.2 ms", "3.21 s".
std::string human_seconds(double seconds);

}  // namespace parplan::tools
