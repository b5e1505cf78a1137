// libFuzzer target: arbitrary bytes as a job file (parse_json -> parse_job with the plan
// checked), and for every job that loads, the memory and step-time estimates, which must be
// finite (core/check.h errors aside). Model and node paths resolve against an empty folder.
// Built with PARPLAN_ENABLE_FUZZERS; run by tools/fuzz.sh.
#include <cmath>
#include <filesystem>

#include "core/job.h"
#include "cost_models/memory_model.h"
#include "cost_models/step_model.h"
#include "fuzz_input.h"

namespace {
const std::string& empty_folder() {
  static const std::string dir = [] {
    const auto path = std::filesystem::temp_directory_path() / "parplan_fuzz_empty";
    std::filesystem::create_directories(path);
    return path.string();
  }();
  return dir;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parplan;
  fuzz::expect_clean([&] {
    const Json object = parse_json(fuzz::as_text(data, size), "job.json");
    const Job job = parse_job(object, "job.json", empty_folder());
    const cost::MemoryEstimate memory = cost::estimate_memory(job);
    PARPLAN_ASSERT(std::isfinite(memory.peak_bytes) && memory.peak_bytes > 0);
    const cost::StepEstimate step = cost::estimate_step(job);
    PARPLAN_ASSERT(std::isfinite(step.step_time_s) && step.step_time_s > 0);
  });
  return 0;
}
