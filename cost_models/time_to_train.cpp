#include "cost_models/time_to_train.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "cost_models/framework_traits.h"
#include "cost_models/lora.h"

namespace parplan::cost {

namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr double kSecondsPerDay = 86400.0;
constexpr double kJoulesPerMwh = 3.6e9;

}  // namespace

double checkpoint_bytes(const Job& job) {
  const FrameworkTraits traits = framework_traits(job.framework, job.training, job.plan);
  const double params = static_cast<double>(job.model.total_params(job.training.seq_length));
  if (job.training.method == TrainingMethod::Lora) {
    // The frozen base in the compute type, the adapters in full mixed precision
    // (parameter_layout.cpp, sharded_state_bytes).
    const double adapters = lora_total_params(job.model, job.training.lora_rank);
    return params * activation_bytes(job.training.precision) +
           adapters * (traits.weight_bytes + traits.optimizer_bytes);
  }
  return params * (traits.weight_bytes + traits.optimizer_bytes);
}

double young_interval_s(double checkpoint_write_s, double mtbf_s) {
  return std::sqrt(2.0 * checkpoint_write_s * mtbf_s);
}

double goodput(double checkpoint_write_s, double interval_s, double restart_s, double mtbf_s) {
  if (interval_s <= 0 || mtbf_s <= 0) return 0;
  const double useful =
      1.0 - checkpoint_write_s / interval_s - (interval_s / 2.0 + restart_s) / mtbf_s;
  return std::clamp(useful, 0.0, 1.0);
}

std::optional<double> cluster_power_w(const Job& job) {
  const RunSpec& run = job.training.run;
  const NodeSpec& node = job.cluster.node;
  const double gpu_w = run.gpu_power_w.value_or(node.gpu.tdp_w);
  if (gpu_w <= 0) return std::nullopt;
  const double overhead_w = run.node_overhead_w.value_or(std::max(node.node_overhead_w, 0.0));
  const double per_gpu_w = gpu_w + overhead_w / static_cast<double>(node.gpus_per_node);
  return static_cast<double>(job.cluster.num_gpus) * per_gpu_w * run.pue;
}

std::optional<TimeToTrain> estimate_time_to_train(const Job& job, const StepEstimate& estimate) {
  const RunSpec& run = job.training.run;
  if (!run.total_tokens) return std::nullopt;
  TimeToTrain t;
  t.total_tokens = *run.total_tokens;
  t.tokens_per_s = estimate.tokens_per_s;
  t.checkpoint_bytes = checkpoint_bytes(job);
  // Every node writes its share of the sharded checkpoint at the same time.
  t.checkpoint_write_s = t.checkpoint_bytes / (static_cast<double>(job.cluster.num_nodes) *
                                               gbps_to_bytes_per_s(run.checkpoint_bandwidth_gbps));
  // Independent failures: the cluster fails as often as all its GPUs together.
  t.cluster_mtbf_s =
      run.gpu_mtbf_hours * kSecondsPerHour / static_cast<double>(job.cluster.num_gpus);
  t.checkpoint_interval_s = young_interval_s(t.checkpoint_write_s, t.cluster_mtbf_s);
  t.goodput = goodput(t.checkpoint_write_s, t.checkpoint_interval_s, run.restart_overhead_s,
                      t.cluster_mtbf_s);
  t.progresses = t.goodput > 0 && t.tokens_per_s > 0;
  if (!t.progresses) return t;
  const double wall_s = t.total_tokens / t.tokens_per_s / t.goodput;
  t.time_to_train_days = wall_s / kSecondsPerDay;
  t.gpu_hours = wall_s / kSecondsPerHour * static_cast<double>(job.cluster.num_gpus);
  // The cluster is held (and powered) for the whole wall time, failures included: an upper
  // bound on the energy, as the GPUs idle below their TDP while restarting.
  t.cluster_power_w = cluster_power_w(job);
  if (t.cluster_power_w) t.energy_mwh = *t.cluster_power_w * wall_s / kJoulesPerMwh;
  if (run.gpu_hour_usd) t.cost_usd = t.gpu_hours * *run.gpu_hour_usd;
  return t;
}

}  // namespace parplan::cost
