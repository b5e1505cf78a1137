// The framework registry (core/frameworks/registry.h): every Framework value has exactly one
// description at its own index, names and aliases round-trip, the shared mixed-precision
// layouts give the bytes per parameter their sources state, and only Megatron-Core's MoE
// combine keeps no weighted expert outputs.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/frameworks/mixed_precision.h"
#include "core/frameworks/registry.h"

namespace parplan {
namespace {

Framework framework_at(std::size_t index) { return static_cast<Framework>(index); }

TEST(FrameworkRegistry, EveryFrameworkIsListedOnceAtItsEnumValue) {
  ASSERT_EQ(all_frameworks().size(), kFrameworkCount);
  std::set<const FrameworkDescription*> seen;
  for (std::size_t i = 0; i < kFrameworkCount; ++i) {
    const FrameworkDescription& description = framework_info(framework_at(i));
    EXPECT_EQ(static_cast<std::size_t>(description.framework), i)
        << "registry entry " << i << " holds " << description.name;
    EXPECT_EQ(all_frameworks()[i], &description);
    EXPECT_TRUE(seen.insert(&description).second) << description.name << " listed twice";
  }
}

TEST(FrameworkRegistry, NamesAndAliasesRoundTrip) {
  std::set<std::string> spellings;
  for (const FrameworkDescription* description : all_frameworks()) {
    const Framework framework = description->framework;
    EXPECT_EQ(parse_framework(to_string(framework)), framework) << description->name;
    EXPECT_TRUE(spellings.insert(description->name).second) << description->name;
    const std::string choices = framework_choices();
    EXPECT_NE(choices.find("\"" + std::string(description->name) + "\""), std::string::npos)
        << choices;
    for (std::string_view alias : description->aliases) {
      EXPECT_EQ(parse_framework(alias), framework) << alias;
      EXPECT_TRUE(spellings.insert(std::string(alias)).second) << alias << " names two frameworks";
      EXPECT_NE(choices.find("\"" + std::string(alias) + "\""), std::string::npos) << choices;
    }
  }
  EXPECT_EQ(parse_framework("nemo"), Framework::MegatronCore);
  EXPECT_EQ(parse_framework("jax"), std::nullopt);
  EXPECT_EQ(parse_framework("Megatron-Core"), std::nullopt);  // spellings are exact
}

TEST(FrameworkRegistry, EveryDescriptionSaysWhatItIsAndWhereItsValuesComeFrom) {
  for (const FrameworkDescription* description : all_frameworks()) {
    EXPECT_NE(std::string(description->summary), "") << description->name;
    EXPECT_NE(std::string(description->sources), "") << description->name;
    EXPECT_NE(description->cost_traits, nullptr) << description->name;
  }
}

double state_bytes_per_param(const FrameworkTraits& t) {
  return t.weight_bytes + t.grad_bytes + t.optimizer_bytes;
}

TEST(MixedPrecision, MegatronLayoutFollowsTheDistributedOptimizerTable) {
  // Megatron-LM docs/source/distrib_optimizer.md, "Data flow": bf16 keeps 16-bit weights, fp32
  // main gradients and fp32 master weights + Adam moments (2 + 4 + 12); fp16 keeps fp16
  // gradients and an fp32 gradient copy inside the optimizer (2 + 2 + 16).
  FrameworkTraits bf16;
  megatron_mixed_precision(bf16, Precision::Bf16);
  EXPECT_EQ(bf16.weight_bytes, 2);
  EXPECT_EQ(bf16.grad_bytes, 4);
  EXPECT_EQ(state_bytes_per_param(bf16), 2 + 4 + 12);
  FrameworkTraits fp16;
  megatron_mixed_precision(fp16, Precision::Fp16);
  EXPECT_EQ(fp16.grad_bytes, 2);
  EXPECT_EQ(state_bytes_per_param(fp16), 2 + 2 + 16);
  // fp32 training: weights, gradients and two Adam moments, no master copy.
  FrameworkTraits fp32;
  megatron_mixed_precision(fp32, Precision::Fp32);
  EXPECT_EQ(state_bytes_per_param(fp32), 4 + 4 + 8);
}

TEST(MixedPrecision, FsdpLayoutKeepsFp32ParametersGradientsAndMoments) {
  // FSDP mixed precision: sharded fp32 parameters, fp32 gradients, two fp32 Adam moments; the
  // fused step updates the fp32 parameters in place (no 16-bit copy to write).
  FrameworkTraits t;
  fsdp_mixed_precision(t);
  EXPECT_EQ(state_bytes_per_param(t), 4 + 4 + 8);
  EXPECT_EQ(t.grad_reduce_bytes, 4);
  EXPECT_EQ(t.optimizer_step_bytes_per_param, kFusedAdamStepBytesPerParam - 2);
}

TEST(MixedPrecision, EachFrameworkKeepsItsFamilysBytesPerParameter) {
  // README "Frameworks", bytes/param (w+g+opt): the Megatron family 2 + 4 + 12 in bf16 and
  // 2 + 2 + 16 in fp16; DeepSpeed ZeRO 2 + 2 + 12 in fp16 (Rajbhandari et al. 2020, §3:
  // K = 12); the FSDP family 4 + 4 + 8 in any 16-bit precision.
  TrainingSpec bf16;
  bf16.precision = Precision::Bf16;
  TrainingSpec fp16;
  fp16.precision = Precision::Fp16;
  auto bytes = [](Framework f, const TrainingSpec& training) {
    return state_bytes_per_param(framework_info(f).cost_traits(training));
  };
  for (Framework f : {Framework::MegatronCore, Framework::MegatronLm, Framework::MegatronDeepspeed,
                      Framework::Other}) {
    EXPECT_EQ(bytes(f, bf16), 2 + 4 + 12) << to_string(f);
    EXPECT_EQ(bytes(f, fp16), 2 + 2 + 16) << to_string(f);
  }
  EXPECT_EQ(bytes(Framework::Deepspeed, fp16), 2 + 2 + 12);
  for (Framework f : {Framework::Torchtitan, Framework::LlmFoundry, Framework::Maxtext}) {
    EXPECT_EQ(bytes(f, bf16), 4 + 4 + 8) << to_string(f);
    EXPECT_EQ(bytes(f, fp16), 4 + 4 + 8) << to_string(f);
  }
}

TEST(MoeCombine, OnlyMegatronCoreSumsUnweightedExpertOutputs) {
  // Megatron-Core multiplies by the router probabilities in the expert activation (core_v0.13.0
  // onwards), so its combine keeps nothing; the others weight the outputs at the combine.
  const TrainingSpec bf16;
  for (std::size_t i = 0; i < kFrameworkCount; ++i) {
    const Framework f = framework_at(i);
    EXPECT_EQ(framework_info(f).cost_traits(bf16).moe_combine_keeps_expert_outputs,
              f != Framework::MegatronCore)
        << to_string(f);
  }
}

}  // namespace
}  // namespace parplan
