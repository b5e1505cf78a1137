// parplan_executor: trains a GPT-style model for a few steps under a job's parallel plan,
// for real, and measures it: per-step loss, step time, per-phase breakdown, peak memory per
// rank, and a Chrome trace. `parplan run` (tools/cmd_run.cpp) is its command line.
//
// Owns: the model (transformer_layer, gpt_chunk), the parameter layout, the pipeline runner,
// the optimizer (trainer), measurement (phase_timer, memory) and the two plug points Comm
// (MPI, NCCL) and Compute (CPU/Eigen, CUDA). Depends on parplan_core only; never on the
// planner, the cost models or the profiler (predictions and measurements meet in tools/).
// Tested in tests/executor/ (unit: ops, layout, model gradients; mpi: plan equivalence and
// the command line; gpu: CUDA ops against the CPU ops).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/chrome_trace.h"
#include "core/job.h"
#include "executor/backends.h"
#include "executor/compute.h"
#include "executor/memory_tracker.h"
#include "executor/phase_timer.h"

namespace parplan::executor {

enum class DTypeChoice { Fp32, Fp64 };

struct RunOptions {
  Backend backend = Backend::Cpu;
  DTypeChoice dtype = DTypeChoice::Fp32;
  int64_t steps = 5;
  uint64_t seed = 1234;
  AdamWConfig adamw;  // lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1
  bool trace = false;
  double comm_timeout_s = 300;  // watchdog; <= 0 disables
};

struct RankReport {
  int64_t rank = 0, tp_rank = 0, pp_rank = 0, dp_rank = 0;
  int64_t peak_memory_bytes = 0;
  std::array<int64_t, kNumMemoryKinds> peak_by_kind{};
  std::vector<double> step_times_s;
  std::array<double, kNumPhases> breakdown_s{};  // mean per step, steps after the first
  double gemm_flops_per_step = 0;
  double gemm_seconds_per_step = 0;  // 0 on asynchronous backends
};

struct RunReport {
  std::vector<double> losses;        // mean token loss of each step (before its update)
  std::vector<double> grad_norms;    // global gradient norm of each step
  std::vector<double> step_times_s;  // per step, the slowest rank
  double step_time_s = 0;            // median of the steps after the first
  double tokens_per_s = 0;
  double peak_memory_bytes = 0;                  // busiest rank
  std::array<double, kNumPhases> breakdown_s{};  // mean over ranks
  std::vector<RankReport> ranks;
  std::vector<TraceEvent> trace;  // every rank's events, on host rank 0 only
  int64_t num_ranks = 1;
  double tokens_per_step = 0;
};

// Throws InputError/Error when the executor cannot run the job with `world_size` ranks
// (rank count, context or expert parallelism, MoE, ZeRO > 1, ...).
void check_job_runnable(const Job& job, int world_size);

// Runs the job on the ranks of `host` (a host-memory communicator with plan.num_gpus()
// ranks). Collective: every rank calls it; every rank gets the report (the trace only on
// rank 0).
RunReport run_job(const Job& job, const RunOptions& options, Comm& host);

// The JSON of `parplan run --json` (docs/commands.md#run, "run --json").
Json run_report_to_json(const RunReport& report, const Job& job, const RunOptions& options);

}  // namespace parplan::executor
