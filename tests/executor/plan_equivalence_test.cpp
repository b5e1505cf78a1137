// The executor's main correctness test ("plan equivalence"): for tiny
// GPTs, the losses of 3 training steps under a parallel plan equal those of one rank
// running the same job, and so do the global gradient norms (kFp64Tolerance, kFp32Tolerance
// below). Losses after the first step check the gradients, their synchronisation and the
// optimizer too; the gradient norms check the gradients' scale directly. Built three
// times (2, 3, 4 and 8 ranks under mpirun); each build runs the plans of its size. The
// "_nccl_rules" cases run every schedule at pp 2-4 under StrictP2pComm (NCCL's
// point-to-point rules; zero-bubble is not in the executor, p2p_plan_test.cpp replays it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "executor/executor.h"
#include "executor/self_comm.h"
#include "executor/strict_p2p_comm.h"
#include "tests/executor/mpi_world.h"
#include "tests/executor/test_jobs.h"

namespace parplan::executor {
namespace {

using testing::tiny_job;
using testing::world;

// The issue asks for 1e-5 (fp64); the executor does far better, and the tighter bound catches
// bugs that Adam's scale-invariant first steps hide (e.g. a missing tp all-reduce of the
// norm gradients under sequence parallelism moved the loss by only 8e-6).
constexpr double kFp64Tolerance = 1e-9;
constexpr double kFp32Tolerance = 1e-5;

struct PlanCase {
  std::string name;
  Json plan;
  std::string flavour = "gpt";
  bool fp64 = true;
  // Under StrictP2pComm: NCCL's point-to-point rules (a deadlock there fails the case).
  bool nccl_rules = false;
  int64_t layers = 4;
  int64_t global_batch = 8;
};

std::ostream& operator<<(std::ostream& out, const PlanCase& c) { return out << c.name; }

int64_t ranks_of(const Json& plan) {
  int64_t n = 1;
  for (const char* key : {"tp", "pp", "dp"}) n *= plan.value(key, int64_t{1});
  return n;
}

// Losses then gradient norms of the 3 steps.
std::vector<double> run_losses(const Job& job, bool fp64, Comm& comm) {
  RunOptions options;
  options.steps = 3;
  options.seed = 99;
  options.dtype = fp64 ? DTypeChoice::Fp64 : DTypeChoice::Fp32;
  options.comm_timeout_s = 120;
  const RunReport report = run_job(job, options, comm);
  std::vector<double> out = report.losses;
  out.insert(out.end(), report.grad_norms.begin(), report.grad_norms.end());
  return out;
}

class PlanEquivalence : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanEquivalence, LossesEqualTheSingleRankRun) {
  const PlanCase& c = GetParam();
  if (ranks_of(c.plan) != world().size())
    GTEST_SKIP() << "runs under mpirun -np " << ranks_of(c.plan);
  const Job job = tiny_job(c.plan, c.flavour, c.layers, c.global_batch);
  std::unique_ptr<Comm> strict;
  if (c.nccl_rules) strict = make_strict_p2p_comm(world(), 60);
  const std::vector<double> losses = run_losses(job, c.fp64, strict ? *strict : world());
  strict.reset();
  auto self = make_self_comm(world().rank());
  const std::vector<double> reference = run_losses(
      tiny_job({{"micro_batch_size", 1}}, c.flavour, c.layers, c.global_batch), c.fp64, *self);
  ASSERT_EQ(losses.size(), reference.size());
  const double tolerance = c.fp64 ? kFp64Tolerance : kFp32Tolerance;
  double worst_loss = 0;
  double worst_norm = 0;
  const std::size_t steps = losses.size() / 2;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    const double relative = std::abs(losses[i] - reference[i]) / std::abs(reference[i]);
    (i < steps ? worst_loss : worst_norm) = std::max(i < steps ? worst_loss : worst_norm, relative);
    EXPECT_LE(relative, tolerance)
        << c.name << (i < steps ? " loss" : " gradient norm") << " of step " << i % steps + 1
        << ": " << losses[i] << " vs " << reference[i];
  }
  if (world().rank() == 0) {
    std::printf("[plan equivalence] %-32s %s max relative error: loss %.1e, grad norm %.1e\n",
                c.name.c_str(), c.fp64 ? "fp64" : "fp32", worst_loss, worst_norm);
  }
  world().barrier();
}

Json plan(std::initializer_list<std::pair<const std::string, Json>> items) {
  Json p = Json::object();
  for (const auto& [k, v] : items) p[k] = v;
  return p;
}

const std::vector<PlanCase> kCases = {
    // 2 ranks
    {"dp2", plan({{"dp", 2}, {"micro_batch_size", 2}})},
    {"dp2_zero1", plan({{"dp", 2}, {"zero_stage", 1}})},
    {"tp2", plan({{"tp", 2}, {"micro_batch_size", 2}})},
    {"tp2_sp", plan({{"tp", 2}, {"sequence_parallel", true}, {"micro_batch_size", 2}})},
    {"tp2_sp_llama", plan({{"tp", 2}, {"sequence_parallel", true}}), "llama"},
    {"pp2_1f1b", plan({{"pp", 2}})},
    {"pp2_gpipe", plan({{"pp", 2}, {"schedule", "gpipe"}, {"micro_batch_size", 2}})},
    {"pp2_vpp2_interleaved", plan({{"pp", 2}, {"vpp", 2}})},
    {"pp2_recompute_full_llama", plan({{"pp", 2}, {"recompute", "full"}}), "llama"},
    {"tp2_fp32", plan({{"tp", 2}, {"micro_batch_size", 2}}), "gpt", false},
    {"pp2_fp32_llama", plan({{"pp", 2}}), "llama", false},
    {"pp2_1f1b_nccl_rules", plan({{"pp", 2}}), "gpt", true, true},
    {"pp2_gpipe_nccl_rules", plan({{"pp", 2}, {"schedule", "gpipe"}}), "gpt", true, true},
    {"pp2_vpp2_interleaved_nccl_rules", plan({{"pp", 2}, {"vpp", 2}}), "gpt", true, true},
    // 3 ranks
    {"pp3_1f1b_nccl_rules", plan({{"pp", 3}}), "gpt", true, true, 6, 7},
    {"pp3_gpipe_nccl_rules", plan({{"pp", 3}, {"schedule", "gpipe"}}), "gpt", true, true, 6},
    {"pp3_vpp2_interleaved_nccl_rules", plan({{"pp", 3}, {"vpp", 2}}), "gpt", true, true, 6, 6},
    // 4 ranks
    {"tp2_pp2", plan({{"tp", 2}, {"pp", 2}})},
    {"dp2_pp2_zero1_gpipe", plan({{"dp", 2}, {"pp", 2}, {"zero_stage", 1}, {"schedule", "gpipe"}})},
    {"dp2_tp2_sp_llama", plan({{"dp", 2}, {"tp", 2}, {"sequence_parallel", true}}), "llama"},
    {"pp4_1f1b", plan({{"pp", 4}})},
    {"tp2_pp2_vpp2_selective",
     plan({{"tp", 2}, {"pp", 2}, {"vpp", 2}, {"recompute", "selective"}})},
    {"dp4_zero1_fp32", plan({{"dp", 4}, {"zero_stage", 1}}), "gpt", false},
    {"pp4_1f1b_nccl_rules", plan({{"pp", 4}}), "gpt", true, true},
    {"pp4_gpipe_nccl_rules", plan({{"pp", 4}, {"schedule", "gpipe"}}), "gpt", true, true},
    {"pp4_vpp2_interleaved_nccl_rules", plan({{"pp", 4}, {"vpp", 2}}), "gpt", true, true, 8},
    {"tp2_pp2_vpp2_nccl_rules", plan({{"tp", 2}, {"pp", 2}, {"vpp", 2}}), "llama", true, true},
    {"tp4_kv_replicated_sp_llama", plan({{"tp", 4}, {"sequence_parallel", true}}), "llama"},
    // 8 ranks
    {"dp2_tp2_pp2", plan({{"dp", 2}, {"tp", 2}, {"pp", 2}})},
    {"dp2_tp2_pp2_sp_zero1",
     plan({{"dp", 2}, {"tp", 2}, {"pp", 2}, {"sequence_parallel", true}, {"zero_stage", 1}})},
    {"dp2_tp2_pp2_vpp2_llama_full",
     plan({{"dp", 2}, {"tp", 2}, {"pp", 2}, {"vpp", 2}, {"recompute", "full"}}), "llama"},
    {"dp2_tp2_pp2_order_tp_pp_dp",
     plan({{"dp", 2}, {"tp", 2}, {"pp", 2}, {"order", "tp-pp-dp"}, {"schedule", "gpipe"}})},
    {"tp4_pp2_kv_replicated", plan({{"tp", 4}, {"pp", 2}, {"micro_batch_size", 2}})},
    {"dp2_tp2_pp2_sp_fp32_llama",
     plan({{"dp", 2}, {"tp", 2}, {"pp", 2}, {"sequence_parallel", true}}), "llama", false},
};

INSTANTIATE_TEST_SUITE_P(Plans, PlanEquivalence, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace parplan::executor
