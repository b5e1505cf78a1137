// The memory savers published runs use (issue 24 point 5), each against its mechanism:
// activation offloading to host memory (plan.offload_activation_layers), Megatron's
// per-module recomputation (plan.recompute_modules), 16-bit gradient reduction
// (training.grad_reduce_in_fp32 false), and the plan rules and planner space around them.
#include <gtest/gtest.h>

#include "core/check.h"
#include "cost_models/activation_memory.h"
#include "cost_models/memory_model.h"
#include "cost_models/step_model.h"
#include "planner/plan_space.h"

namespace parplan::cost {
namespace {

// Llama 3.1 70B on 64 GB200 GPUs with Megatron-FSDP at micro-batch 2 (Megatron-Bridge's
// LLAMA3_70B_GB200_FP8_CS recipe), with extra plan and training keys.
Job gb200_70b(const std::string& plan_extra, const std::string& training_extra = "",
              const std::string& node = "gb200-nvl72") {
  const std::string text = R"({"framework": "megatron-core", "model": "llama3.1-70b",
      "cluster": {"node": ")" +
                           node + R"(", "num_gpus": 64},
      "training": {"global_batch_size": 256, "seq_length": 8192, "precision": "fp8")" +
                           training_extra + R"(},
      "plan": {"tp": 1, "pp": 1, "micro_batch_size": 2, "zero_stage": 3)" +
                           plan_extra + "}}";
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

ActivationOptions options_of(const Job& job) {
  return activation_options(job, framework_traits(job.framework, job.training, job.plan));
}

double layer_stored_bytes(const Job& job) {
  return dense_layer_activation_bytes(job.model, options_of(job)).stored;
}

TEST(ActivationOffload, OffloadedLayersLeaveTheGpu) {
  const Job base = gb200_70b("");
  const Job half = gb200_70b(R"(, "offload_activation_layers": 40)");
  const double saved = estimate_memory(base).stages[0].activations_bytes -
                       estimate_memory(half).stages[0].activations_bytes;
  EXPECT_NEAR(saved, 40 * layer_stored_bytes(base), 1e-6 * saved);
  EXPECT_LT(estimate_memory(half).peak_bytes, estimate_memory(base).peak_bytes);
}

TEST(ActivationOffload, TransfersCostOnlyWhatComputeDoesNotHide) {
  auto offload_cost_s = [](const std::string& node) {
    const Job base = gb200_70b("", "", node);
    const Job half = gb200_70b(R"(, "offload_activation_layers": 40)", "", node);
    return estimate_step(half).step_time_s - estimate_step(base).step_time_s;
  };
  // NVLink-C2C (225 GB/s per GPU and direction) hides more of the copies than PCIe Gen5
  // (63 GB/s); the copies never make a step faster.
  const double c2c = offload_cost_s("gb200-nvl72");
  const double pcie = offload_cost_s("dgx-b200");
  EXPECT_GE(c2c, 0.0);
  EXPECT_GT(pcie, c2c);
  // At most every copy fully exposed: 40 layers x 2 directions x 2 micro-batches at 63 GB/s.
  const double per_copy_s = layer_stored_bytes(gb200_70b("", "", "dgx-b200")) / 63e9;
  EXPECT_LE(pcie, 40 * 2 * 2 * per_copy_s * (1 + 1e-9));
}

TEST(ActivationOffload, FollowsMegatronCoreRules) {
  EXPECT_THROW(gb200_70b(R"(, "offload_activation_layers": 80)"), InputError);  // all layers
  EXPECT_THROW(gb200_70b(R"(, "offload_activation_layers": 8, "recompute": "full")"), InputError);
  // A node without a host-link figure cannot time the copies.
  const std::string v100 = R"({"framework": "megatron-core", "model": "llama2-7b",
      "cluster": {"node": "dgx-v100", "num_gpus": 8},
      "training": {"global_batch_size": 8, "seq_length": 2048, "precision": "fp16"},
      "plan": {"tp": 8, "offload_activation_layers": 4}})";
  try {
    parse_job(parse_json(v100, "job.json"), "job.json", "");
    FAIL() << "offloading on a node without host_link_gbps was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("host_link_gbps"), std::string::npos) << e.what();
  }
}

TEST(ActivationOffload, PlanJsonShowsTheKeyOnlyWhenSet) {
  EXPECT_FALSE(parallel_plan_to_json(gb200_70b("").plan).contains("offload_activation_layers"));
  EXPECT_EQ(parallel_plan_to_json(gb200_70b(R"(, "offload_activation_layers": 40)").plan)
                .at("offload_activation_layers"),
            40);
}

TEST(RecomputeModules, EachModuleDropsItsOutputsAndAddsItsForward) {
  const Job none = gb200_70b("");
  const Job core = gb200_70b(R"(, "recompute": "selective")");
  const Job norms = gb200_70b(R"(, "recompute": "selective", "recompute_modules": ["layernorm"])");
  const Job mlp = gb200_70b(R"(, "recompute": "selective", "recompute_modules": ["mlp"])");
  // Flash attention keeps only its statistics: Megatron's default module saves nothing.
  EXPECT_NEAR(layer_stored_bytes(core), layer_stored_bytes(none), 1e-6);
  const ActivationOptions o = options_of(none);
  const double gemm_input = o.gemm_input_bytes > 0 ? o.gemm_input_bytes : o.bytes_per_value;
  const double tokens = 2.0 * 8192;  // micro-batch 2 of 8192 tokens
  // The norms' outputs: the QKV and FC1 GEMM inputs, T x h each.
  EXPECT_NEAR(layer_stored_bytes(none) - layer_stored_bytes(norms), 2 * gemm_input * tokens * 8192,
              1.0);
  // The MLP: FC1 output (gate and up, 2 x ffn values) and FC2 input (ffn GEMM input).
  EXPECT_NEAR(layer_stored_bytes(none) - layer_stored_bytes(mlp),
              (2 * o.bytes_per_value + gemm_input) * tokens * 28672, 1.0);
  // More recomputation never speeds the step up.
  EXPECT_GT(estimate_step(mlp).breakdown.recompute, estimate_step(norms).breakdown.recompute);
  EXPECT_GT(estimate_step(norms).breakdown.recompute, 0.0);
}

TEST(RecomputeModules, OnlyWithSelectiveRecomputeAndKnownNames) {
  EXPECT_THROW(gb200_70b(R"(, "recompute_modules": ["mlp"])"), InputError);
  EXPECT_THROW(gb200_70b(R"(, "recompute": "selective", "recompute_modules": ["attention"])"),
               InputError);
  EXPECT_THROW(gb200_70b(R"(, "recompute": "selective", "recompute_modules": [])"), InputError);
  const Json json = parallel_plan_to_json(
      gb200_70b(R"(, "recompute": "selective", "recompute_modules": ["mlp", "layernorm"])").plan);
  EXPECT_EQ(json.at("recompute_modules"), Json::array({"layernorm", "mlp"}));
}

TEST(GradientReduction, SixteenBitGradientsHalveTheBufferAndTheTraffic) {
  const Job fp32 = gb200_70b("");
  const Job bf16 = gb200_70b("", R"(, "grad_reduce_in_fp32": false)");
  const StageMemory a = estimate_memory(fp32).stages[0];
  const StageMemory b = estimate_memory(bf16).stages[0];
  EXPECT_NEAR(b.gradients_bytes, a.gradients_bytes / 2, 1e-6 * a.gradients_bytes);
  const FrameworkTraits t = framework_traits(bf16.framework, bf16.training, bf16.plan);
  EXPECT_EQ(t.grad_reduce_bytes, 2);
  // torchtitan's FSDP keeps fp32 parameters and gradients: the key changes nothing there.
  TrainingSpec training = bf16.training;
  EXPECT_EQ(framework_traits(Framework::Torchtitan, training, bf16.plan).grad_bytes, 4);
}

}  // namespace
}  // namespace parplan::cost

namespace parplan::planner {
namespace {

// Llama 3.1 70B at 8192 tokens on one GB200 tray of 4 GPUs: nothing fits without a saver.
Job tight_job() {
  const std::string text = R"({"framework": "megatron-core", "model": "llama3.1-70b",
      "cluster": {"node": "gb200-nvl72", "num_gpus": 4},
      "training": {"global_batch_size": 8, "seq_length": 8192, "precision": "fp8"},
      "plan": {}})";
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

TEST(MemorySavers, TheDefaultSpaceHasNone) {
  const Enumeration space = enumerate_plans(tight_job(), PlanFixes{});
  for (const auto& p : space.plans) {
    EXPECT_EQ(p.offload_activation_layers, 0);
    EXPECT_EQ(p.recompute_modules, 0u);
  }
}

TEST(MemorySavers, TheWiderSpaceOffloadsOnlyWithoutPipeliningOrRecompute) {
  SpaceLimits limits;
  limits.memory_savers = true;
  const Enumeration space = enumerate_plans(tight_job(), PlanFixes{}, limits);
  int offloading = 0, modules = 0;
  for (const auto& p : space.plans) {
    if (p.offload_activation_layers > 0) {
      ++offloading;
      EXPECT_EQ(p.pp, 1);
      EXPECT_EQ(p.recompute, Recompute::None);
      EXPECT_TRUE(p.offload_activation_layers == 40 || p.offload_activation_layers == 79);
    }
    if (p.recompute_modules != 0) {
      ++modules;
      EXPECT_EQ(p.recompute, Recompute::Selective);
    }
  }
  EXPECT_GT(offloading, 0);
  EXPECT_GT(modules, 0);
}

}  // namespace
}  // namespace parplan::planner
