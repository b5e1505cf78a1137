// `mpirun -np N parplan run --job FILE --backend cpu|cuda [--steps S] [--seed X]
//  [--dtype fp32|fp64] [--json] [--trace OUT.json]`: trains the job's model for a few steps
// under its plan, for real, with the executor (executor/executor.h). Rank 0 prints.
// Errors every rank finds alike (a bad job, a wrong rank count) are printed once and every
// rank exits 1; a failure on one rank during the run prints that rank's error and aborts the
// whole job (MPI_Abort) so that no rank hangs. Tested in tests/executor/run_cli_test.cpp.
#include <cstdio>
#include <string_view>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/chrome_trace.h"
#include "core/plural.h"
#include "core/units.h"
#include "executor/executor.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

struct RunCliOptions {
  std::string job;
  std::string backend = "cpu";
  int64_t steps = 5;
  uint64_t seed = 1234;
  std::string dtype = "fp32";
  double lr = 1e-3;
  bool json = false;
  std::string trace;
  double comm_timeout_s = 300;
};

void print_text(const executor::RunReport& r, const Job& job, const executor::RunOptions& o) {
  const ParallelPlan& p = job.plan;
  std::printf(
      "parplan run: %s on %s (%s backend, %s); plan tp=%lld pp=%lld dp=%lld",
      job.model.name.c_str(), count_of(r.num_ranks, "rank").c_str(), executor::to_string(o.backend),
      o.dtype == executor::DTypeChoice::Fp64 ? "fp64" : "fp32", static_cast<long long>(p.tp),
      static_cast<long long>(p.pp), static_cast<long long>(p.dp));
  if (p.vpp > 1) std::printf(" vpp=%lld", static_cast<long long>(p.vpp));
  std::printf(" micro_batch_size=%lld schedule=%s%s zero_stage=%d recompute=%s\n",
              static_cast<long long>(p.micro_batch_size), to_string(p.schedule),
              p.sequence_parallel ? " sequence_parallel" : "", p.zero_stage,
              to_string(p.recompute));
  if (job.training.precision != Precision::Fp32) {
    std::printf(
        "(the job's %s mixed precision is not emulated: weights, activations and the "
        "optimizer state are %s)\n",
        to_string(job.training.precision),
        o.dtype == executor::DTypeChoice::Fp64 ? "fp64" : "fp32");
  }
  TextTable steps({"step", "loss", "grad norm", "time", "tokens/s"});
  for (std::size_t s = 0; s < r.losses.size(); ++s) {
    steps.add_row({std::to_string(s + 1), fixed(r.losses[s], 5), fixed(r.grad_norms[s], 4),
                   human_seconds(r.step_times_s[s]),
                   fixed(r.tokens_per_step / r.step_times_s[s], 0)});
  }
  std::fputs(steps.render({0, 1, 2, 3, 4}).c_str(), stdout);
  std::printf("step time %s (median of steps after the first), %s tokens/s (%s per rank)\n",
              human_seconds(r.step_time_s).c_str(), fixed(r.tokens_per_s, 0).c_str(),
              fixed(r.tokens_per_s / static_cast<double>(r.num_ranks), 0).c_str());
  double total = 0;
  for (double v : r.breakdown_s) total += v;
  TextTable phases({"phase (mean over ranks)", "time/step", "share"});
  for (int i = 0; i < executor::kNumPhases; ++i) {
    phases.add_row({executor::to_string(static_cast<executor::Phase>(i)),
                    human_seconds(r.breakdown_s[i]),
                    percent(total > 0 ? r.breakdown_s[i] / total : 0)});
  }
  std::fputs(phases.render({1, 2}).c_str(), stdout);
  TextTable memory({"rank", "tp", "pp", "dp", "peak GiB", "params", "grads", "optimizer",
                    "activations+workspace"});
  for (const auto& rank : r.ranks) {
    auto gib = [&](executor::MemoryKind k) {
      return fixed(static_cast<double>(rank.peak_by_kind[static_cast<int>(k)]) / kGiB, 4);
    };
    const double transient =
        static_cast<double>(rank.peak_by_kind[static_cast<int>(executor::MemoryKind::Activations)] +
                            rank.peak_by_kind[static_cast<int>(executor::MemoryKind::Workspace)]);
    memory.add_row({std::to_string(rank.rank), std::to_string(rank.tp_rank),
                    std::to_string(rank.pp_rank), std::to_string(rank.dp_rank),
                    fixed(static_cast<double>(rank.peak_memory_bytes) / kGiB, 4),
                    gib(executor::MemoryKind::Parameters), gib(executor::MemoryKind::Gradients),
                    gib(executor::MemoryKind::Optimizer), fixed(transient / kGiB, 4)});
  }
  std::fputs(memory.render({0, 1, 2, 3, 4, 5, 6, 7, 8}).c_str(), stdout);
}

void run_run(const RunCliOptions& o) {
  std::unique_ptr<executor::Comm> host = executor::start_host_world();
  const bool root = host->rank() == 0;

  // Setup: every rank reads and checks the job; they agree before anything runs.
  Job job;
  executor::RunOptions options;
  std::string setup_error;
  try {
    job = load_job(o.job);
    const auto backend = executor::parse_backend(o.backend);
    PARPLAN_CHECK(backend.has_value(), "--backend: unknown backend ", o.backend);
    options.backend = *backend;
    std::string why_not;
    PARPLAN_CHECK(executor::backend_available(options.backend, job.plan.num_gpus(), &why_not),
                  "--backend ", o.backend, ": ", why_not);
    options.dtype = o.dtype == "fp64" ? executor::DTypeChoice::Fp64 : executor::DTypeChoice::Fp32;
    options.steps = o.steps;
    options.seed = o.seed;
    options.adamw.lr = o.lr;
    options.trace = !o.trace.empty();
    options.comm_timeout_s = o.comm_timeout_s;
    if (options.trace) check_not_overwriting_inputs(o.trace, {o.job});
    executor::check_job_runnable(job, host->size());
  } catch (const Error& e) {
    setup_error = e.what();
  }
  int64_t failed = setup_error.empty() ? 0 : 1;
  host->all_reduce(&failed, 1, executor::DType::I64, executor::ReduceOp::Sum);
  if (failed > 0) {
    // Print first, then leave together: mpirun ends the job as soon as one rank exits
    // non-zero, which could otherwise cut rank 0 off before it has said why.
    if (!setup_error.empty() && (failed < host->size() || root)) {
      if (failed < host->size()) {
        std::fprintf(stderr, "error: rank %d: %s\n", host->world_rank(), setup_error.c_str());
      } else {
        std::fprintf(stderr, "error: %s\n", setup_error.c_str());  // the same everywhere: once
      }
      std::fflush(stderr);
    }
    host->barrier();
    throw QuietExit{1};
  }

  executor::RunReport report;
  try {
    report = executor::run_job(job, options, *host);
  } catch (const std::exception& e) {
    // Messages from the communicators already name the rank.
    const std::string prefix = "rank " + std::to_string(host->world_rank()) + ":";
    if (std::string_view(e.what()).starts_with(prefix)) {
      std::fprintf(stderr, "error: %s\n", e.what());
    } else {
      std::fprintf(stderr, "error: %s %s\n", prefix.c_str(), e.what());
    }
    std::fflush(stderr);
    host->abort(1);
  }
  if (!root) return;
  if (options.trace) write_chrome_trace(o.trace, report.trace);
  if (o.json) {
    print_json(executor::run_report_to_json(report, job, options));
  } else {
    print_text(report, job, options);
    if (options.trace) std::printf("trace written to %s\n", o.trace.c_str());
  }
}

}  // namespace

void register_run(CLI::App& app) {
  auto o = std::make_shared<RunCliOptions>();
  auto* cmd = app.add_subcommand(
      "run",
      "Train the job's model for a few steps under its plan, for real, and measure it "
      "(launch with mpirun -np <the plan's GPU count>)");
  cmd->add_option("--job", o->job, "Job file (JSON, see docs/job_file.md)")->required();
  cmd->add_option("--backend", o->backend, "cpu (Eigen + MPI) or cuda (cuBLAS + NCCL)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--steps", o->steps, "Optimizer steps")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the weights and the synthetic data")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "Precision of weights, activations and optimizer state")
      ->check(CLI::IsMember({"fp32", "fp64"}))
      ->capture_default_str();
  cmd->add_option("--lr", o->lr, "AdamW learning rate (constant)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--comm-timeout", o->comm_timeout_s,
                  "Seconds one communication call may wait before the run is aborted (0: never)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object (rank 0)");
  cmd->add_option("--trace", o->trace, "Write a Chrome trace (Perfetto) of the run to this file");
  cmd->callback([o] { run_run(*o); });
}

}  // namespace parplan::tools
