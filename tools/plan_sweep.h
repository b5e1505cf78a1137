// `parplan plan --gpus A:B[:step]|N,M,... [--deadline-days D]`: the best plan at each cluster
// size (whole nodes of the job's node), with its throughput, MFU, goodput, days, GPU-hours and
// cost (cost_models/time_to_train.h), and the cheapest size that meets a deadline.
// Tested in tests/tools/plan_sweep_test.cpp (parsing, the choice) and cli_test.cpp (the CLI).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/json_input.h"
#include "cost_models/time_to_train.h"
#include "planner/search.h"

namespace parplan::tools {

// The GPU counts of --gpus: "A:B" doubles from A up to B, "A:B:S" steps by S GPUs, "N,M,..."
// lists them. Every count is a positive multiple of gpus_per_node (whole nodes); at most
// kMaxSweepSizes sizes. Errors are InputErrors naming --gpus.
inline constexpr int kMaxSweepSizes = 256;
std::vector<int64_t> parse_gpu_sizes(const std::string& text, int64_t gpus_per_node);

struct SweepRow {
  int64_t num_gpus = 0;
  int64_t num_nodes = 0;
  std::optional<planner::RankedPlan> best;  // none: no plan fits at this size
  std::optional<cost::TimeToTrain> run;     // with a best plan and training.total_tokens
  double search_time_s = 0;
};

struct SweepResult {
  std::vector<SweepRow> rows;
  // With a deadline: the row meeting it with the fewest GPU-hours (ties: fewer GPUs).
  std::optional<std::size_t> chosen;
  double sweep_time_s = 0;
};

// Searches each size with `search` (top_k forced to 1); `deadline_days` needs total_tokens.
SweepResult sweep_cluster_sizes(const Job& job, const std::vector<int64_t>& gpu_sizes,
                                const planner::SearchOptions& search,
                                std::optional<double> deadline_days);

// The row with the fewest GPU-hours among those finishing within `deadline_days`.
std::optional<std::size_t> cheapest_within_deadline(const std::vector<SweepRow>& rows,
                                                    double deadline_days);

// The knee: the last size before the first step up in size that buys less than half its
// ideal speed-up (marginal efficiency (t_prev / t - 1) / (n / n_prev - 1) < 0.5, t the days to
// train, or the step time without total_tokens); nullopt when every step pays or fewer than
// two sizes have a plan.
inline constexpr double kKneeMarginalEfficiency = 0.5;
std::optional<std::size_t> knee_index(const std::vector<SweepRow>& rows);

// sweep.html: the sweep's table and two line charts against the GPU count (days and
// GPU-hours, or tokens/s and MFU without total_tokens), the knee and the chosen size marked;
// one self-contained page like report.html. Written by `plan --gpus ... --report DIR`.
std::string sweep_to_html(const Job& job, const SweepResult& sweep,
                          std::optional<double> deadline_days);

Json sweep_to_json(const Job& job, const SweepResult& sweep, std::optional<double> deadline_days);
std::string sweep_to_text(const Job& job, const SweepResult& sweep,
                          std::optional<double> deadline_days);

}  // namespace parplan::tools
