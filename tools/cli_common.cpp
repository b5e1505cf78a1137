#include "tools/cli_common.h"

#include <cstdio>

#include "core/hardware_profile.h"
#include "core/units.h"
#include "tools/text_table.h"

namespace parplan::tools {

void print_json(const Json& value) {
  const std::string text = value.dump(2, ' ', false, Json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

void apply_profile_option(Job& job, const std::string& profile_path) {
  if (profile_path.empty()) return;
  job.cluster = apply_profile(job.cluster, load_hardware_profile(profile_path));
}

void print_job_warnings(const Job& job) {
  for (const auto& warning : job.warnings) std::fprintf(stderr, "warning: %s\n", warning.c_str());
}

std::string human_seconds(double seconds) {
  if (seconds < kMs) return fixed(seconds * kUsPerS, 0) + " us";
  if (seconds < 1.0) return fixed(seconds * kMsPerS, 1) + " ms";
  return fixed(seconds, 2) + " s";
}

}  // namespace parplan::tools
