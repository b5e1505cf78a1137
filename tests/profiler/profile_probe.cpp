// profile_probe: a fresh measurement with the profiler's own code path, for the prediction
// test: under mpirun it times one GEMM shape (Eigen, every rank at once) and/or one
// all-reduce size (MPI, all ranks) with a tighter stopping rule than --quick, and rank 0
// prints {"gemm_median_s": ..., "all_reduce_median_s": ..., "noise": {...}} on stdout.
//   mpirun -np 2 profile_probe --gemm 384x1536x384 --all-reduce 98304
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
  std::string gemm;
  double all_reduce_bytes = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--gemm") == 0) gemm = argv[i + 1];
    if (std::strcmp(argv[i], "--all-reduce") == 0) all_reduce_bytes = std::stod(argv[i + 1]);
  }
  auto group = start_process_group();
  ProfileOptions options = default_profile_options(true);
  options.stopping.max_noise = 0.02;
  options.stopping.budget_s = 1.0;
  parplan::Json out = parplan::Json::object();
  try {
    if (!gemm.empty()) {
      const auto records =
          measure_cpu_gemms(*group, parse_gemm_shapes(gemm, "--gemm"), "fp32", options);
      out["gemm_median_s"] = records.at(0).time.median_s;
      out["gemm_noise"] = records.at(0).time.noise;
    }
    if (all_reduce_bytes > 0) {
      options.collective_ops = {parplan::Collective::AllReduce};
      options.collective_sizes = {all_reduce_bytes};
      std::vector<std::string> warnings;
      const auto records = make_mpi_collective_benchmark()->run(*group, options, warnings);
      out["all_reduce_median_s"] = records.at(0).time.median_s;
      out["all_reduce_noise"] = records.at(0).time.noise;
      out["all_reduce_size_bytes"] = records.at(0).size_bytes;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "profile_probe: %s\n", e.what());
    group->abort(1);
    return 1;
  }
  if (group->is_root()) std::printf("%s\n", out.dump().c_str());
  return 0;
}
