// Performance check of the CPU executor (issue: "a single rank's GEMM-heavy step reaches
// >= 60% of the GEMM throughput"): times a standalone Eigen GEMM (the same library and flags
// the executor uses, no executor code in between), then one rank training a GEMM-heavy GPT
// in fp32, and prints
//   - gemm_in_step: FLOP/s inside the step's GEMM calls / standalone Eigen FLOP/s
//   - whole_step:   GEMM FLOPs of a step / the step's time / standalone Eigen FLOP/s
// (whole_step charges every non-GEMM op, the optimizer and bookkeeping to the ratio).
// Times are CPU time of the thread (CLOCK_THREAD_CPUTIME_ID), so that other processes on a
// shared machine do not distort the ratios; the wall-clock step time is printed too.
// Not a ctest: timings are not a pass/fail signal. Usage:
//   executor_gemm_ratio [--json] [hidden] [layers] [seq] [micro_batch]
#include <Eigen/Core>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/job.h"
#include "executor/executor.h"
#include "executor/self_comm.h"

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using parplan::executor::thread_cpu_seconds;

// Best of several runs of C = A * B^T (the executor's forward GEMM form).
double eigen_gemm_flops_per_s(int64_t m, int64_t n, int64_t k) {
  Matrix a = Matrix::Random(m, k), b = Matrix::Random(n, k), c(m, n);
  c.noalias() = a * b.transpose();  // warm up
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const double start = thread_cpu_seconds();
    c.noalias() = a * b.transpose();
    best = std::min(best, thread_cpu_seconds() - start);
  }
  if (c(0, 0) == 12345.0f) std::puts("");  // keep the product alive
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace parplan;
  bool json = false;
  std::vector<int64_t> numbers;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else {
      numbers.push_back(std::atoll(argv[i]));
    }
  }
  const int64_t hidden = numbers.size() > 0 ? numbers[0] : 512;
  const int64_t layers = numbers.size() > 1 ? numbers[1] : 4;
  const int64_t seq = numbers.size() > 2 ? numbers[2] : 256;
  const int64_t mbs = numbers.size() > 3 ? numbers[3] : 4;
  const int64_t tokens = seq * mbs;

  const double square = eigen_gemm_flops_per_s(1024, 1024, 1024);
  const double shaped = eigen_gemm_flops_per_s(tokens, 4 * hidden, hidden);
  const double reference = std::max(square, shaped);

  const Json job_json = {{"model",
                          {{"name", "gemm-heavy"},
                           {"num_layers", layers},
                           {"hidden_size", hidden},
                           {"num_attention_heads", hidden / 64},
                           {"vocab_size", 2048}}},
                         {"cluster", {{"node", "dgx-h100"}, {"num_gpus", 1}}},
                         {"training", {{"global_batch_size", mbs}, {"seq_length", seq}}},
                         {"plan", {{"micro_batch_size", mbs}}}};
  const Job job = parse_job(job_json, "<bench>", "");
  executor::RunOptions options;
  options.comm_timeout_s = 0;  // no watchdog thread
  auto self = executor::make_self_comm();
  // Setup (initialisation) costs the same in both runs; the difference is 3 steps.
  options.steps = 1;
  double start = thread_cpu_seconds();
  executor::run_job(job, options, *self);
  const double one_step = thread_cpu_seconds() - start;
  options.steps = 4;
  start = thread_cpu_seconds();
  const executor::RunReport r = executor::run_job(job, options, *self);
  const double step_cpu_s = (thread_cpu_seconds() - start - one_step) / 3.0;
  const executor::RankReport& rank = r.ranks.at(0);
  const double in_gemm = rank.gemm_flops_per_step / rank.gemm_seconds_per_step;
  const double over_step = rank.gemm_flops_per_step / step_cpu_s;
  if (json) {
    std::printf(
        "{\"eigen_gemm_gflops_1024\": %.2f, \"eigen_gemm_gflops_model_shape\": %.2f, "
        "\"step_cpu_s\": %.4f, \"step_wall_s\": %.4f, \"gemm_gflops_in_step\": %.2f, "
        "\"gemm_gflops_over_step\": %.2f, \"gemm_in_step_ratio\": %.3f, "
        "\"whole_step_ratio\": %.3f}\n",
        square / 1e9, shaped / 1e9, step_cpu_s, r.step_time_s, in_gemm / 1e9, over_step / 1e9,
        in_gemm / reference, over_step / reference);
    return 0;
  }
  std::printf("model: L=%lld h=%lld T=%lld micro-batch %lld, %lld parameters, fp32, one rank\n",
              static_cast<long long>(layers), static_cast<long long>(hidden),
              static_cast<long long>(seq), static_cast<long long>(mbs),
              static_cast<long long>(job.model.total_params(seq)));
  std::printf("standalone Eigen GEMM: %.2f GFLOP/s (1024^3), %.2f GFLOP/s (%lld x %lld x %lld)\n",
              square / 1e9, shaped / 1e9, static_cast<long long>(tokens),
              static_cast<long long>(4 * hidden), static_cast<long long>(hidden));
  std::printf("step: %.3f s CPU (%.3f s wall); GEMM FLOPs per step %.3g in %.3f s CPU\n",
              step_cpu_s, r.step_time_s, rank.gemm_flops_per_step, rank.gemm_seconds_per_step);
  std::printf("gemm_in_step: %.2f GFLOP/s = %.0f%% of standalone Eigen\n", in_gemm / 1e9,
              100 * in_gemm / reference);
  std::printf("whole_step:   %.2f GFLOP/s = %.0f%% of standalone Eigen\n", over_step / 1e9,
              100 * over_step / reference);
  return 0;
}
