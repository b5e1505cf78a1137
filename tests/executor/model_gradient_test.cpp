// The whole single-rank model: gradients against central finite differences of the loss
// (fp64), recompute modes and micro-batching leave gradients unchanged, and training lowers
// the loss on the synthetic data.
#include <gtest/gtest.h>

#include <cmath>

#include "executor/cpu/cpu_compute.h"
#include "executor/self_comm.h"
#include "executor/trainer.h"
#include "tests/executor/test_jobs.h"

namespace parplan::executor {
namespace {

using testing::tiny_job;

struct SingleRank {
  explicit SingleRank(const Job& j, uint64_t seed = 7)
      : job(j),
        world(make_self_comm()),
        compute(make_cpu_compute<double>()),
        timer({}, false, "rank 0", "stage 0"),
        trainer(job, TrainerOptions{seed, {}}, *world, *compute, timer) {}
  Job job;
  std::unique_ptr<Comm> world;
  std::unique_ptr<Compute<double>> compute;
  PhaseTimer timer;
  Trainer<double> trainer;
};

void check_gradients(const std::string& flavour) {
  SingleRank r(tiny_job({{"micro_batch_size", 1}}, flavour, 2, 2, 8));
  Trainer<double>& t = r.trainer;
  t.forward_backward(0);
  const std::vector<double> grads = t.grads_host();
  const std::vector<double> params = t.params_host();
  auto loss_at = [&](const std::vector<double>& p) {
    t.set_params_host(p);
    return t.forward_backward(0);
  };
  int checked = 0;
  for (const ParamTensor& tensor : t.layout().tensors) {
    // A few elements of every tensor, spread over it.
    for (int64_t k = 0; k < 3; ++k) {
      const int64_t i = tensor.offset + (k * 7919 + 13) % tensor.numel();
      std::vector<double> p = params;
      const double eps = 1e-5;
      p[i] = params[i] + eps;
      const double up = loss_at(p);
      p[i] = params[i] - eps;
      const double down = loss_at(p);
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(grads[i], numeric, 1e-7 + 1e-5 * std::abs(numeric))
          << flavour << " " << tensor.name << " element " << i - tensor.offset;
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
}

TEST(ModelGradient, GptMatchesFiniteDifferences) { check_gradients("gpt"); }
TEST(ModelGradient, LlamaMatchesFiniteDifferences) { check_gradients("llama"); }

TEST(ModelGradient, RecomputeAndMicroBatchingKeepGradients) {
  for (const std::string flavour : {"gpt", "llama"}) {
    SingleRank base(tiny_job({{"micro_batch_size", 2}}, flavour));
    base.trainer.forward_backward(0);
    const std::vector<double> expected = base.trainer.grads_host();
    for (const Json& plan :
         {Json{{"micro_batch_size", 2}, {"recompute", "full"}},
          Json{{"micro_batch_size", 2}, {"recompute", "selective"}}, Json{{"micro_batch_size", 1}},
          Json{{"micro_batch_size", 4}, {"schedule", "gpipe"}}}) {
      SingleRank other(tiny_job(plan, flavour));
      other.trainer.forward_backward(0);
      const std::vector<double> grads = other.trainer.grads_host();
      ASSERT_EQ(grads.size(), expected.size());
      for (std::size_t i = 0; i < grads.size(); ++i) {
        ASSERT_NEAR(grads[i], expected[i], 1e-13 + 1e-11 * std::abs(expected[i]))
            << flavour << " " << plan.dump() << " element " << i;
      }
    }
  }
}

TEST(ModelGradient, GradNormCountsEveryParameterOnce) {
  SingleRank r(tiny_job({{"micro_batch_size", 2}}));
  r.trainer.forward_backward(0);
  double expected = 0;
  for (double g : r.trainer.grads_host()) expected += g * g;
  EXPECT_GT(expected, 0);
  EXPECT_NEAR(r.trainer.local_grad_norm_sq(), expected, 1e-12 * expected);
}

TEST(ModelGradient, InitialLossIsLogVocabAndTrainingLowersIt) {
  SingleRank r(tiny_job({{"micro_batch_size", 4}}, "gpt", 2, 8, 16));
  const double first = r.trainer.step(0).loss;
  EXPECT_NEAR(first, std::log(64.0), 0.1);  // small random weights: near-uniform predictions
  double last = first;
  for (int64_t s = 1; s < 40; ++s) last = r.trainer.step(s).loss;
  EXPECT_LT(last, first - 0.4) << "the synthetic data is learnable";
}

TEST(ModelGradient, SameSeedSameRunOtherSeedOtherRun) {
  SingleRank a(tiny_job({{"micro_batch_size", 2}}), 11);
  SingleRank b(tiny_job({{"micro_batch_size", 2}}), 11);
  SingleRank c(tiny_job({{"micro_batch_size", 2}}), 12);
  for (int64_t s = 0; s < 2; ++s) {
    const double la = a.trainer.step(s).loss;
    EXPECT_EQ(la, b.trainer.step(s).loss);
    EXPECT_NE(la, c.trainer.step(s).loss);
  }
}

}  // namespace
}  // namespace parplan::executor
