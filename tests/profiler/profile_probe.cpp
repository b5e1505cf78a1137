// profile_probe: fresh measurements with the profiler's own code path, for the prediction
// test. Under mpirun it times GEMM shapes (Eigen fp32, every rank at once, interleaved) and
// all-reduce sizes (MPI, interleaved) with a tighter stopping rule than --quick; rank 0
// prints {"gemm": [{"shape", "median_s", "noise", "disturbed_only"}...],
// "all_reduce": [{"size_bytes", ...}]}.
//   mpirun -np 2 profile_probe --gemm 320x640x256,512x256x256 --all-reduce 98304,131072
#include <cstdio>
#include <cstring>
#include <string>

#include "core/json_input.h"
#include "profiler/backend.h"
#include "profiler/cpu_backend.h"
#include "profiler/gemm_shapes.h"
#include "profiler/mpi/mpi_collectives.h"

int main(int argc, char** argv) {
  using namespace parplan::profiler;
  using parplan::Json;
  std::string gemm;
  std::vector<double> sizes;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--gemm") == 0) gemm = argv[i + 1];
    if (std::strcmp(argv[i], "--all-reduce") == 0) {
      std::string list = argv[i + 1];
      for (std::size_t begin = 0; begin < list.size();) {
        const std::size_t end = std::min(list.find(',', begin), list.size());
        sizes.push_back(std::stod(list.substr(begin, end - begin)));
        begin = end + 1;
      }
    }
  }
  auto group = start_process_group();
  ProfileOptions options = default_profile_options(true);
  options.stopping.max_noise = 0.02;
  options.stopping.budget_s = 1.0;
  Json out = {{"gemm", Json::array()}, {"all_reduce", Json::array()}};
  try {
    if (!gemm.empty()) {
      for (const auto& r :
           measure_cpu_gemms(*group, parse_gemm_shapes(gemm, "--gemm"), "fp32", options)) {
        out["gemm"].push_back({{"shape", to_string(r.shape)},
                               {"median_s", r.time.median_s},
                               {"noise", r.time.noise},
                               {"disturbed_only", r.time.disturbed_only}});
      }
    }
    if (!sizes.empty()) {
      options.collective_ops = {parplan::Collective::AllReduce};
      options.collective_sizes = sizes;
      std::vector<std::string> warnings;
      for (const auto& r : make_mpi_collective_benchmark()->run(*group, options, warnings)) {
        out["all_reduce"].push_back({{"size_bytes", r.size_bytes},
                                     {"median_s", r.time.median_s},
                                     {"noise", r.time.noise},
                                     {"disturbed_only", r.time.disturbed_only}});
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "profile_probe: %s\n", e.what());
    group->abort(1);
    return 1;
  }
  if (group->is_root()) std::printf("%s\n", out.dump().c_str());
  return 0;
}
