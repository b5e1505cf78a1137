// Time to train, goodput and cost of a whole run (docs/cost_model.md#time-to-train-goodput-and-
// cost): the job's throughput from the step model, failures at the cluster's interruption rate,
// checkpoints written at Young's optimum interval, the restart cost of each failure, and the
// cluster's energy and price. Tested in tests/cost_models/time_to_train_test.cpp (closed forms,
// monotonicity) and tests/tools/cli_test.cpp (the simulate keys and bad input).
#pragma once

#include <optional>

#include "core/job.h"
#include "cost_models/step_model.h"

namespace parplan::cost {

// Bytes of one checkpoint: the weights and the optimizer state as the memory model counts
// them (the framework's bytes per parameter), one copy of the whole model (replicas over dp
// write nothing extra; Megatron-Core's distributed checkpoint shards it over the dp ranks).
// LoRA saves the frozen 16-bit base and the adapters' weights and optimizer state.
double checkpoint_bytes(const Job& job);

// Young's first-order optimum checkpoint interval, sqrt(2 C M) for a checkpoint costing C
// seconds and a mean time between failures M (Young 1974, CACM 17(9); Daly 2006, FGCS 22(3)
// eq. 20 refines it when C is not small against M).
double young_interval_s(double checkpoint_write_s, double mtbf_s);

// Fraction of wall time spent on useful training with a checkpoint of C seconds every T
// seconds of work and failures every M seconds, each costing a restart R and half an interval
// of lost work on average: 1 - C/T - (T/2 + R)/M, clamped to [0, 1] (first-order model of
// Young 1974 and Daly 2006).
double goodput(double checkpoint_write_s, double interval_s, double restart_s, double mtbf_s);

// Power of the whole cluster at the wall, watts: every GPU at its TDP plus its share of the
// node overhead, times the PUE. Nullopt when the node gives no TDP and the job no override.
std::optional<double> cluster_power_w(const Job& job);

struct TimeToTrain {
  double total_tokens = 0;
  double tokens_per_s = 0;
  double checkpoint_bytes = 0;
  double checkpoint_write_s = 0;
  double cluster_mtbf_s = 0;
  double checkpoint_interval_s = 0;
  double goodput = 0;
  bool progresses = false;  // goodput > 0: the run finishes at all
  // The following hold when progresses.
  double time_to_train_days = 0;
  double gpu_hours = 0;
  std::optional<double> energy_mwh;  // with a GPU power
  std::optional<double> cost_usd;    // with a price
  std::optional<double> cluster_power_w;
};

// The run of `job` at the step estimate's throughput; nullopt when the job has no
// training.total_tokens.
std::optional<TimeToTrain> estimate_time_to_train(const Job& job, const StepEstimate& estimate);

}  // namespace parplan::cost
