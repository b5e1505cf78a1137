#include "cost_models/activation_memory.h"

#include <gtest/gtest.h>

namespace parplan::cost {
namespace {

// Korthikanti et al. 2022, Table 2, for a GPT layer (MHA, gelu, 4h MLP, dropout, no flash
// attention), in units of s*b*h bytes.
class Korthikanti : public testing::Test {
 protected:
  ModelSpec model;
  ActivationOptions options;
  double s = 2048, b = 4, h = 6144, a = 48;
  void SetUp() override {
    model.hidden_size = 6144;
    model.num_attention_heads = 48;
    model.num_query_groups = 48;
    model.head_dim = 128;
    model.ffn_hidden_size = 4 * 6144;
    options.micro_batch_size = 4;
    options.seq_length = 2048;
    options.flash_attention = false;
    options.dropout = true;
  }
  double stored() { return dense_layer_activation_bytes(model, options).stored / (s * b * h); }
};

TEST_F(Korthikanti, NoParallelism) { EXPECT_NEAR(stored(), 34 + 5 * a * s / h, 1e-9); }

TEST_F(Korthikanti, TensorParallel) {
  options.tp = 8;
  EXPECT_NEAR(stored(), 10 + 24.0 / 8 + 5 * a * s / (h * 8), 1e-9);
}

TEST_F(Korthikanti, TensorAndSequenceParallel) {
  options.tp = 8;
  options.sequence_parallel = true;
  EXPECT_NEAR(stored(), 34.0 / 8 + 5 * a * s / (h * 8), 1e-9);
}

TEST_F(Korthikanti, TensorParallelSelectiveRecompute) {
  options.tp = 8;
  options.recompute = Recompute::Selective;
  EXPECT_NEAR(stored(), 10 + 24.0 / 8, 1e-9);
}

TEST_F(Korthikanti, TensorSequenceParallelSelectiveRecompute) {
  options.tp = 8;
  options.sequence_parallel = true;
  options.recompute = Recompute::Selective;
  EXPECT_NEAR(stored(), 34.0 / 8, 1e-9);
}

TEST_F(Korthikanti, FullRecompute) {
  options.recompute = Recompute::Full;
  EXPECT_NEAR(stored(), 2, 1e-9);
  options.tp = 8;
  options.sequence_parallel = true;
  EXPECT_NEAR(stored(), 2.0 / 8, 1e-9);
}

TEST_F(Korthikanti, FlashAttentionDropsTheScoreTerm) {
  options.flash_attention = true;
  const double flash = stored();
  // log-sum-exp statistics remain: 4 bytes per head per token.
  EXPECT_NEAR(flash, 34 + 4 * a / h, 1e-9);
}

TEST_F(Korthikanti, ContextParallelDividesEverything) {
  options.flash_attention = true;
  const double one = stored();
  options.cp = 4;
  EXPECT_NEAR(stored(), one / 4, 1e-9);
}

TEST_F(Korthikanti, Fp8GemmInputsTakeOneByte) {
  // Transformer Engine keeps the fp8-cast inputs of the QKV, projection, FC1 and FC2 GEMMs
  // (sbh + sbh + sbh + 4sbh at 1 byte instead of 2): 7 sbh less of the 34.
  options.flash_attention = true;
  options.gemm_input_bytes = 1;
  EXPECT_NEAR(stored(), 34 - 7 + 4 * a / h, 1e-9);
  options.recompute = Recompute::Full;  // the layer input stays 16-bit
  EXPECT_NEAR(stored(), 2, 1e-9);
}

// A MoE layer under tensor and sequence parallelism: each GPU dispatches its own T/tp tokens
// and its experts receive their top_k copies, gathered over the expert-TP group
// (cost_models/expert_rows.h, the rows the step time computes on). Expert TP 1 or tp changes
// the experts' FC1 outputs not at all (T/tp*k rows of the whole width, or T*k rows of 1/tp of
// it) and halves, at tp 2, the dispatched FC1 inputs and combine buffer: (2+2)*T/tp*k*h bytes.
TEST(MoeActivationMemory, ExpertsHoldTheRowsTheyReceive) {
  ModelSpec model;
  model.hidden_size = 4096;
  model.num_attention_heads = 64;
  model.num_query_groups = 4;
  model.head_dim = 128;
  model.ffn_hidden_size = 12288;
  model.activation = Activation::Swiglu;
  model.moe = MoeSpec{128, 8, 1536};
  ActivationOptions options;
  options.micro_batch_size = 1;
  options.seq_length = 4096;
  options.tp = 2;
  options.sequence_parallel = true;
  const double etp1 = moe_layer_activation_bytes(model, options, 32, 1).stored;
  const double etp2 = moe_layer_activation_bytes(model, options, 32, 2).stored;
  const double dispatched_rows = 4096.0 / 2 * 8;
  EXPECT_NEAR(etp2 - etp1, (2 + 2) * dispatched_rows * 4096, 1e-6 * etp1);
}

// A combine that sums unweighted expert outputs (Megatron-Core applies the router
// probabilities in the expert activation) keeps no top_k 16-bit copies of each token: the layer
// stores exactly 2 * T * k * h bytes less, every other tensor unchanged, recomputed or not.
TEST(MoeActivationMemory, AnUnweightedCombineKeepsNoExpertOutputs) {
  ModelSpec model;
  model.hidden_size = 2048;
  model.num_attention_heads = 32;
  model.num_query_groups = 4;
  model.head_dim = 128;
  model.ffn_hidden_size = 6144;
  model.activation = Activation::Swiglu;
  model.moe = MoeSpec{128, 8, 768};
  ActivationOptions options;
  options.micro_batch_size = 2;
  options.seq_length = 4096;
  for (const Recompute recompute : {Recompute::None, Recompute::Selective}) {
    options.recompute = recompute;
    options.moe_combine_keeps_expert_outputs = true;
    const double weighted = moe_layer_activation_bytes(model, options, 8, 1).stored;
    options.moe_combine_keeps_expert_outputs = false;
    const double unweighted = moe_layer_activation_bytes(model, options, 8, 1).stored;
    const double routed_rows = 2.0 * 4096 * 8;
    EXPECT_NEAR(weighted - unweighted, 2 * routed_rows * 2048, 1e-9 * weighted);
  }
  // Full recomputation keeps only the layer input either way.
  options.recompute = Recompute::Full;
  options.moe_combine_keeps_expert_outputs = true;
  const double full = moe_layer_activation_bytes(model, options, 8, 1).stored;
  options.moe_combine_keeps_expert_outputs = false;
  EXPECT_EQ(moe_layer_activation_bytes(model, options, 8, 1).stored, full);
}

}  // namespace
}  // namespace parplan::cost
