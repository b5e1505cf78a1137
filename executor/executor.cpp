#include "executor/executor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "core/check.h"
#include "core/plural.h"
#include "core/units.h"
#include "executor/trainer.h"
#include "executor/watchdog.h"

namespace parplan::executor {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Arms the watchdog for the lifetime of a collective outside the timed steps.
class Watched {
 public:
  Watched(Watchdog& watchdog, const char* what) : watchdog_(watchdog) { watchdog_.arm(what); }
  ~Watched() { watchdog_.disarm(); }
  Watched(const Watched&) = delete;
  Watched& operator=(const Watched&) = delete;

 private:
  Watchdog& watchdog_;
};

// Rank 0 receives every rank's trace events.
std::vector<TraceEvent> gather_trace(Comm& host, const std::vector<TraceEvent>& mine) {
  Json list = Json::array();
  for (const auto& e : mine) list.push_back(trace_event_to_json(e));
  const std::string text = list.dump();
  std::vector<int64_t> lengths(host.size());
  lengths[host.rank()] = static_cast<int64_t>(text.size());
  host.all_gather(&lengths[host.rank()], lengths.data(), 1, DType::I64);
  constexpr int kTraceTag = 4242;
  std::vector<TraceEvent> out;
  if (host.rank() != 0) {
    if (!text.empty())
      host.wait(host.isend(text.data(), lengths[host.rank()], DType::U8, 0, kTraceTag));
    return out;
  }
  out = mine;
  for (int r = 1; r < host.size(); ++r) {
    std::string buffer(lengths[r], '\0');
    if (lengths[r] > 0) host.wait(host.irecv(buffer.data(), lengths[r], DType::U8, r, kTraceTag));
    for (const auto& e : Json::parse(buffer)) out.push_back(trace_event_from_json(e));
  }
  return out;
}

// Fault injection for the failure tests (tests/executor/run_cli_test.cpp):
// PARPLAN_EXECUTOR_FAIL_AT="RANK:STEP" makes that host rank throw at the start of that step.
void maybe_inject_failure(int rank, int64_t step) {
  const char* spec = std::getenv("PARPLAN_EXECUTOR_FAIL_AT");
  if (spec == nullptr) return;
  int fail_rank = -1;
  long long fail_step = -1;
  if (std::sscanf(spec, "%d:%lld", &fail_rank, &fail_step) != 2) return;
  if (fail_rank == rank && fail_step == step) {
    throw Error("injected failure at step " + str(step + 1) + " (PARPLAN_EXECUTOR_FAIL_AT)");
  }
}

template <typename T>
RunReport run_typed(const Job& job, const RunOptions& options, Comm& host) {
  std::unique_ptr<Compute<T>> compute =
      make_compute<T>(options.backend, host.world_rank(), host.node_local_rank());
  Watchdog watchdog(options.comm_timeout_s, host.world_rank());
  std::unique_ptr<Comm> device;
  {
    Watched watched(watchdog, "starting the device communicator");
    device = make_device_world(options.backend, host);
  }
  const RankGrid grid = make_rank_grid(job.plan);
  const int64_t rank = host.rank();
  const int64_t pp_rank = grid.coord(rank, "pp");
  const std::string process = "rank " + str(rank) + " (pp " + str(pp_rank) + ", tp " +
                              str(grid.coord(rank, "tp")) + ", dp " + str(grid.coord(rank, "dp")) +
                              ")";
  std::function<void()> sync;
  if (!compute->synchronous()) sync = [c = compute.get()] { c->synchronize(); };
  PhaseTimer timer(sync, options.trace, process, "stage " + str(pp_rank), &watchdog);
  TrainerOptions trainer_options;
  trainer_options.seed = options.seed;
  trainer_options.adamw = options.adamw;

  RankReport mine;
  std::vector<double> local_losses;
  std::vector<double> local_norms;
  std::vector<std::array<double, kNumPhases>> phases;
  GemmStats gemm;
  {
    std::unique_ptr<Trainer<T>> owned;
    {
      Watched watched(watchdog, "setup (communicator splits)");
      owned = std::make_unique<Trainer<T>>(job, trainer_options, *device, *compute, timer);
      host.barrier();
    }
    Trainer<T>& trainer = *owned;
    timer.start_clock();
    for (int64_t s = 0; s < options.steps; ++s) {
      {
        Watched watched(watchdog, "the barrier before a step");
        host.barrier();
      }
      maybe_inject_failure(host.rank(), s);
      timer.begin_step();
      const StepResult result = trainer.step(s);
      local_losses.push_back(result.loss);
      local_norms.push_back(result.grad_norm_sq);
      timer.end_step();
      mine.step_times_s.push_back(timer.step_total_s());
      phases.push_back(timer.step_seconds());
    }
    mine.peak_memory_bytes = trainer.memory().peak_bytes();
    mine.peak_by_kind = trainer.memory().peak_by_kind();
    gemm = trainer.gemm_stats();
  }
  const int64_t steps = options.steps;
  const int64_t first_measured = steps > 1 ? 1 : 0;
  for (int64_t s = first_measured; s < steps; ++s) {
    for (int p = 0; p < kNumPhases; ++p) mine.breakdown_s[p] += phases[s][p];
  }
  for (double& v : mine.breakdown_s) v /= static_cast<double>(steps - first_measured);
  mine.gemm_flops_per_step = gemm.flops / static_cast<double>(steps);
  mine.gemm_seconds_per_step = gemm.seconds / static_cast<double>(steps);

  // Everything every rank measured, to every rank: one fixed-size record per rank.
  const int64_t record = 3 + kNumMemoryKinds + steps + kNumPhases;
  std::vector<double> records(record * host.size());
  double* r = records.data() + record * host.rank();
  r[0] = static_cast<double>(mine.peak_memory_bytes);
  r[1] = mine.gemm_flops_per_step;
  r[2] = mine.gemm_seconds_per_step;
  for (int k = 0; k < kNumMemoryKinds; ++k) r[3 + k] = static_cast<double>(mine.peak_by_kind[k]);
  for (int64_t s = 0; s < steps; ++s) r[3 + kNumMemoryKinds + s] = mine.step_times_s[s];
  for (int p = 0; p < kNumPhases; ++p) r[3 + kNumMemoryKinds + steps + p] = mine.breakdown_s[p];
  Watched watched(watchdog, "gathering the measurements");
  host.all_gather(r, records.data(), record, DType::F64);
  local_losses.insert(local_losses.end(), local_norms.begin(), local_norms.end());
  host.all_reduce(local_losses.data(), 2 * steps, DType::F64, ReduceOp::Sum);

  RunReport report;
  report.losses.assign(local_losses.begin(), local_losses.begin() + steps);
  for (int64_t s = 0; s < steps; ++s)
    report.grad_norms.push_back(std::sqrt(local_losses[steps + s]));
  report.num_ranks = host.size();
  report.tokens_per_step =
      static_cast<double>(job.training.global_batch_size) * job.training.seq_length;
  report.step_times_s.assign(steps, 0.0);
  for (int i = 0; i < host.size(); ++i) {
    const double* q = records.data() + record * i;
    RankReport rr;
    rr.rank = i;
    rr.tp_rank = grid.coord(i, "tp");
    rr.pp_rank = grid.coord(i, "pp");
    rr.dp_rank = grid.coord(i, "dp");
    rr.peak_memory_bytes = static_cast<int64_t>(q[0]);
    rr.gemm_flops_per_step = q[1];
    rr.gemm_seconds_per_step = q[2];
    for (int k = 0; k < kNumMemoryKinds; ++k) rr.peak_by_kind[k] = static_cast<int64_t>(q[3 + k]);
    for (int64_t s = 0; s < steps; ++s) {
      rr.step_times_s.push_back(q[3 + kNumMemoryKinds + s]);
      report.step_times_s[s] = std::max(report.step_times_s[s], rr.step_times_s.back());
    }
    for (int p = 0; p < kNumPhases; ++p) {
      rr.breakdown_s[p] = q[3 + kNumMemoryKinds + steps + p];
      report.breakdown_s[p] += rr.breakdown_s[p] / host.size();
    }
    report.peak_memory_bytes =
        std::max(report.peak_memory_bytes, static_cast<double>(rr.peak_memory_bytes));
    report.ranks.push_back(std::move(rr));
  }
  report.step_time_s = median(
      std::vector<double>(report.step_times_s.begin() + first_measured, report.step_times_s.end()));
  report.tokens_per_s = report.step_time_s > 0 ? report.tokens_per_step / report.step_time_s : 0;
  if (options.trace) report.trace = gather_trace(host, timer.events());
  return report;
}

}  // namespace

void check_job_runnable(const Job& job, int world_size) {
  const ParallelPlan& p = job.plan;
  const ModelSpec& m = job.model;
  const std::string& f = job.file;
  if (p.num_gpus() != world_size) {
    throw Error(f + ": the plan needs tp*pp*dp*cp = " + count_of(p.num_gpus(), "GPU") +
                " (cluster.num_gpus = " + str(job.cluster.num_gpus) + ") but " +
                count_of(world_size, "rank") + (world_size == 1 ? " was" : " were") +
                " started; run it with mpirun -np " + str(p.num_gpus()));
  }
  if (p.cp > 1)
    throw InputError(f, "plan.cp", str(p.cp), "1 (the executor has no context parallelism)");
  if (p.ep > 1)
    throw InputError(f, "plan.ep", str(p.ep), "1 (the executor has no expert parallelism)");
  if (m.moe)
    throw InputError(f, "model.moe", "a mixture-of-experts model",
                     "a dense model (the executor has no MoE layers)");
  if (m.mla)
    throw InputError(f, "model.mla", "multi-latent attention",
                     "a model without mla (the executor has standard attention)");
  if (m.position_embedding == PositionEmbedding::Alibi) {
    throw InputError(f, "model.position_embedding", "\"alibi\"",
                     "\"learned\" or \"rotary\" in the executor");
  }
  if (m.position_embedding == PositionEmbedding::Rotary && m.head_dim % 2 != 0) {
    throw InputError(f, "model.head_dim", str(m.head_dim), "an even width for rotary embeddings");
  }
  if (p.zero_stage > 1) {
    throw InputError(f, "plan.zero_stage", str(p.zero_stage),
                     "0 or 1 (the executor has no ZeRO-2/3)");
  }
  if (p.schedule == ScheduleKind::ZeroBubble || p.schedule == ScheduleKind::DualPipe) {
    throw InputError(f, "plan.schedule", std::string("\"") + to_string(p.schedule) + "\"",
                     "\"gpipe\", \"1f1b\" or \"interleaved\" in the executor");
  }
  if (job.training.method == TrainingMethod::Lora) {
    throw InputError(f, "training.method", "\"lora\"", "\"pretrain\" or \"sft\" in the executor");
  }
  const int64_t m_batches = p.num_micro_batches(job.training.global_batch_size);
  if (p.vpp > 1 && m_batches < p.pp) {
    throw InputError(f, "training.global_batch_size", str(job.training.global_batch_size),
                     "at least pp*dp*micro_batch_size = " + str(p.pp * p.dp * p.micro_batch_size) +
                         " (the interleaved schedule needs as many micro-batches as stages)");
  }
  if (p.sequence_parallel && p.tp > 1 && job.training.seq_length % p.tp != 0) {
    throw InputError(f, "training.seq_length", str(job.training.seq_length),
                     "a multiple of tp with sequence_parallel");
  }
}

RunReport run_job(const Job& job, const RunOptions& options, Comm& host) {
  check_job_runnable(job, host.size());
  PARPLAN_CHECK(options.steps >= 1, "--steps must be at least 1");
  if (options.dtype == DTypeChoice::Fp64) return run_typed<double>(job, options, host);
  return run_typed<float>(job, options, host);
}

Json run_report_to_json(const RunReport& report, const Job& job, const RunOptions& options) {
  auto phases = [](const std::array<double, kNumPhases>& values) {
    Json out = Json::object();
    for (int p = 0; p < kNumPhases; ++p) out[to_string(static_cast<Phase>(p))] = values[p];
    return out;
  };
  Json ranks = Json::array();
  double gemm_flops = 0;
  double gemm_seconds = 0;
  for (const RankReport& r : report.ranks) {
    Json memory = Json::object();
    for (int k = 0; k < kNumMemoryKinds; ++k) {
      memory[std::string(to_string(static_cast<MemoryKind>(k))) + "_gib"] =
          static_cast<double>(r.peak_by_kind[k]) / kGiB;
    }
    ranks.push_back({{"rank", r.rank},
                     {"tp_rank", r.tp_rank},
                     {"pp_rank", r.pp_rank},
                     {"dp_rank", r.dp_rank},
                     {"peak_memory_gib", static_cast<double>(r.peak_memory_bytes) / kGiB},
                     {"memory_at_peak", memory},
                     {"step_times_s", r.step_times_s},
                     {"breakdown", phases(r.breakdown_s)},
                     {"gemm_flops_per_step", r.gemm_flops_per_step}});
    gemm_flops += r.gemm_flops_per_step;
    gemm_seconds += r.gemm_seconds_per_step;
  }
  Json out = {
      {"losses", report.losses},
      {"step_time_s", report.step_time_s},
      {"step_times_s", report.step_times_s},
      {"tokens_per_s", report.tokens_per_s},
      {"tokens_per_s_per_rank", report.tokens_per_s / static_cast<double>(report.num_ranks)},
      {"peak_memory_gib", report.peak_memory_bytes / kGiB},
      {"breakdown", phases(report.breakdown_s)},
      {"per_rank", ranks},
      {"num_ranks", report.num_ranks},
      {"backend", to_string(options.backend)},
      {"dtype", options.dtype == DTypeChoice::Fp64 ? "fp64" : "fp32"},
      // The executor computes in `dtype`; the job's mixed precision is not emulated.
      {"job_precision", to_string(job.training.precision)},
      {"steps", options.steps},
      {"seed", options.seed},
      {"model", job.model.name},
      {"model_params", job.model.total_params(job.training.seq_length)},
      {"tokens_per_step", report.tokens_per_step},
      {"plan", parallel_plan_to_json(job.plan)},
      {"gemm_flops_per_step", gemm_flops}};
  if (gemm_seconds > 0) {
    // Throughput inside the GEMM calls, and the share of the step they take (host backends).
    out["gemm_tflops_per_rank"] = gemm_flops / gemm_seconds / kTera;
    out["gemm_tflops_per_rank_over_step"] =
        report.step_time_s > 0
            ? gemm_flops / static_cast<double>(report.num_ranks) / report.step_time_s / kTera
            : 0.0;
  }
  return out;
}

}  // namespace parplan::executor
