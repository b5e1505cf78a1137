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

// Applies a measured hardware profile (--profile PROFILE.json, written by `parplan profile`)
// to the job's cluster: the profile's device, link and collective figures replace the node
// preset's (core/hardware_profile.h apply_profile). No-op for an empty path.
void apply_profile_option(Job& job, const std::string& profile_path);

// Prints the job's warnings (Job::warnings) on stderr, one "warning: ..." line each.
void print_job_warnings(const Job& job);

// Formats seconds for humans: "812 us", "45.2 ms", "3.21 s".
std::string human_seconds(double seconds);

}  // namespace parplan::tools
