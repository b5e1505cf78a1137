// Turns a profiling run's raw records into the profile file (schema "parplan-profile/1",
// profiler/README.md): fits the GEMM model (fit_gemm.h) and the collectives (fit_collective.h),
// takes the achieved memory bandwidth, and writes a node in exactly the node-preset schema
// with each measured figure as {"value", "source": "measured by parplan profile on HOST at
// DATE: ..."}, plus host, device, coverage, fits and every measurement. The document is
// checked with core's parse_hardware_profile before it is returned.
// Tested in tests/profiler/hardware_profile_test.cpp (synthetic runs, round trip).
#pragma once

#include <string>
#include <vector>

#include "core/json_input.h"
#include "profiler/fit_gemm.h"
#include "profiler/profile_options.h"
#include "profiler/records.h"

namespace parplan::profiler {

struct ProfileContext {
  std::string created_utc;  // utc_timestamp()
  std::string generator;    // the command line, for the record
  double elapsed_s = 0;
};

Json build_profile(const RawProfile& raw, const ProfileOptions& options,
                   const ProfileContext& context);

// The GEMM model fitted to a run's GEMMs of these precisions, as the profile's fits are:
// measurements whose every sample was disturbed (another process held a rank's core) are left
// out while enough others remain. bandwidth_gbps is the model's memory-bound floor.
struct GemmFits {
  int excluded_disturbed = 0;
  std::vector<std::string> precisions;  // of the joint fit
  GemmFitInput input;
  GemmFitResult result;
};
GemmFits fit_gemms(const RawProfile& raw, const std::vector<std::string>& precisions,
                   double bandwidth_gbps);

// Precisions whose GEMM fit goes into the node (CPU: fp32; GPUs: fp16, bf16, fp8).
bool is_node_precision(const std::string& backend, const std::string& precision);

// Element size of a GEMM operand in bytes (fp64 8, fp32 4, fp16/bf16 2, fp8 1).
double element_bytes(const std::string& precision);

}  // namespace parplan::profiler
