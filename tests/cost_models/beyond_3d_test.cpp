// Mechanisms beyond dp x tp x pp against hand calculations: the expert all-to-all message
// sizes, ZeRO-3/FSDP memory, context-parallel activation split, multi-latent attention.
#include <gtest/gtest.h>

#include "core/collective.h"
#include "cost_models/collective_model.h"
#include "cost_models/layer_cost.h"
#include "cost_models/memory_model.h"
#include "cost_models/parameter_layout.h"

namespace parplan::cost {
namespace {

Job job_from(const std::string& text) {
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

TEST(Beyond3d, ExpertAllToAllCarriesTopKCopiesOfEveryToken) {
  // Mixtral 8x7B, ep 8 inside one DGX H100: each GPU dispatches T * top_k rows of h 16-bit
  // values, and combines as many back: 2 all-to-alls forward and 2 backward.
  const Job job =
      job_from(R"({"model": "mixtral-8x7b", "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 64, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 1, "dp": 8, "ep": 8, "micro_batch_size": 1}})");
  const CostContext ctx = CostContext::make(job, job.cluster.node);
  const double T = 4096, k = 2, h = 4096;
  const double bytes = T * k * h * 2.0;
  EXPECT_EQ(ctx.ep_group.size, 8);
  EXPECT_EQ(ctx.ep_group.nodes, 1);
  const double a2a =
      collective_cost(job.cluster.node, Collective::AllToAll, ctx.ep_group, bytes).time_s;
  // Hand calculation: latency + S (n-1)/n / busbw, busbw = 450 GB/s NVLink x 0.82 efficiency.
  const double busbw =
      job.cluster.node.intra.link_bandwidth_gbps * job.cluster.node.intra.busbw_efficiency;
  EXPECT_NEAR(a2a, job.cluster.node.intra.latency_us * 1e-6 + bytes * 7.0 / 8.0 / (busbw * 1e9),
              1e-12);
  const LayerTime moe = moe_layer_time(ctx);
  EXPECT_NEAR(moe.forward.ep_comm, 2 * a2a, 1e-12);
  EXPECT_NEAR(moe.backward.ep_comm, 2 * a2a, 1e-12);
}

TEST(Beyond3d, MultiLatentAttentionProjectsThroughTheLatentRanks) {
  // DeepSeek-V3's attention projections (DeepSeek-V2 §2.1.2): each parameter is used once per
  // token, so their forward GEMMs are 2 T times the attention parameters. With tensor
  // parallelism the up-projections and the output projection split over the heads; the
  // down-projections to the latent ranks (h x 1536, h x (512 + 64)) are replicated, and with
  // sequence parallelism they read only this rank's T / tp rows.
  struct Case {
    int tp;
    bool sp;
  };
  for (const Case c : {Case{1, false}, Case{4, false}, Case{4, true}}) {
    // (framework "other": Megatron-Core would reject MoE with tp > 1 and no sequence
    // parallelism; the attention's arithmetic is the same in either framework.)
    const Job job = job_from(R"({"model": "deepseek-v3", "framework": "other",
        "cluster": {"node": "dgx-h100", "num_nodes": 2},
        "training": {"global_batch_size": 64, "seq_length": 4096},
        "plan": {"tp": )" + std::to_string(c.tp) +
                             R"(, "sequence_parallel": )" + (c.sp ? "true" : "false") +
                             R"(, "pp": 1, "ep": 4, "micro_batch_size": 1}})");
    double projection_flops = 0;
    const ExplainedLayer layer = explain_layer(job, false);
    for (const OpRecord& op : layer.ops) {
      if (op.name.find("projection") != std::string::npos) projection_flops += op.flops;
    }
    const double T = 4096, h = 7168;
    const double replicated = h * 1536 + h * (512 + 64);
    const double split = static_cast<double>(job.model.attention_params()) - replicated;
    const double rows = c.sp ? T / c.tp : T;
    SCOPED_TRACE(testing::Message() << "tp " << c.tp << " sp " << c.sp);
    EXPECT_NEAR(projection_flops, 2 * (rows * replicated + T * split / c.tp),
                1e-9 * projection_flops);
  }
}

TEST(Beyond3d, MultiLatentAttentionGathersTheLatentsNotTheHiddenState) {
  // Sequence parallelism gathers the attention's input where its column-parallel GEMMs
  // start: for MLA the latents (1536 + 512 + 64 wide) instead of the 7168-wide hidden state.
  const auto make = [](bool mla) {
    std::string model = R"({"name": "m", "num_layers": 4, "hidden_size": 7168,
        "num_attention_heads": 128, "head_dim": 192, "ffn_hidden_size": 18432,
        "vocab_size": 129280, "activation": "swiglu", "normalization": "rmsnorm")";
    if (mla) {
      model += R"(, "mla": {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
                            "qk_rope_head_dim": 64, "v_head_dim": 128})";
    }
    model += "}";
    // "other": Megatron-style kernels without userbuffer overlap, so the forward TP time is
    // the collectives themselves.
    return job_from(R"({"framework": "other", "model": )" + model + R"(,
        "cluster": {"node": "dgx-h100", "num_nodes": 1},
        "training": {"global_batch_size": 8, "seq_length": 4096},
        "plan": {"tp": 8, "sequence_parallel": true, "micro_batch_size": 1}})");
  };
  const Job full_rank = make(false);
  const Job latent = make(true);
  const CostContext full_ctx = CostContext::make(full_rank, full_rank.cluster.node);
  const CostContext latent_ctx = CostContext::make(latent, latent.cluster.node);
  const double full = dense_layer_time(full_ctx).forward.tp_comm;
  const double gathered = dense_layer_time(latent_ctx).forward.tp_comm;
  const double T = 4096, bpv = 2;
  const auto ag = [&](double width) {
    return collective_cost(full_rank.cluster.node, Collective::AllGather, full_ctx.tp_group,
                           bpv * T * width)
        .time_s;
  };
  EXPECT_NEAR(full - gathered, ag(7168) - ag(1536 + 512 + 64), 1e-9);
}

TEST(Beyond3d, ExpertTensorParallelDispatchesSequenceShards) {
  // tp 2 with sequence parallelism, ep 4 inside dp 8 (expert-TP = tp = 2): each GPU routes
  // its own T/2 tokens, all-to-alls T/2 * top_k rows over ep, then its expert-TP pair
  // all-gathers the T * top_k received rows and reduce-scatters them after the experts.
  const Job job =
      job_from(R"({"model": "mixtral-8x7b", "cluster": {"node": "dgx-h100", "num_nodes": 2},
      "training": {"global_batch_size": 64, "seq_length": 4096},
      "plan": {"tp": 2, "pp": 1, "dp": 8, "ep": 4, "micro_batch_size": 1, "sequence_parallel": true}})");
  ASSERT_EQ(job.plan.expert_tp(), 2);
  const CostContext ctx = CostContext::make(job, job.cluster.node);
  const double T = 4096, k = 2, h = 4096;
  const auto& node = job.cluster.node;
  const double a2a =
      collective_cost(node, Collective::AllToAll, ctx.ep_group, 2.0 * (T / 2) * k * h).time_s;
  const double gather =
      collective_cost(node, Collective::AllGather, ctx.tp_group, 2.0 * T * k * h).time_s +
      collective_cost(node, Collective::ReduceScatter, ctx.tp_group, 2.0 * T * k * h).time_s;
  const LayerTime moe = moe_layer_time(ctx);
  EXPECT_NEAR(moe.forward.ep_comm, 2 * a2a + gather, 1e-12);
  EXPECT_NEAR(moe.backward.ep_comm, 2 * a2a + gather, 1e-12);
  // The experts see all T * top_k rows at half the expert width: per GPU, half the FLOPs of
  // tp 1, like every other part of the layer.
  Job tp1 = job;
  tp1.plan.tp = 1;
  tp1.plan.dp = 16;
  tp1.plan.sequence_parallel = false;
  const CostContext ctx1 = CostContext::make(tp1, tp1.cluster.node);
  const double experts_tp2 = moe.model_flops;
  const double experts_tp1 = moe_layer_time(ctx1).model_flops;
  EXPECT_NEAR(experts_tp2 * 2, experts_tp1, 0.01 * experts_tp1);
}

TEST(Beyond3d, ExpertAllToAllAcrossNodesIsBoundByTheNics) {
  // ep 16 over two nodes: of each GPU's (n-1)/n * S outgoing bytes, 8/16 leave the node over
  // its NIC (one per GPU on a DGX H100).
  const Job job =
      job_from(R"({"model": "mixtral-8x7b", "cluster": {"node": "dgx-h100", "num_nodes": 4},
      "training": {"global_batch_size": 64, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 2, "dp": 16, "ep": 8, "micro_batch_size": 1}})");
  GroupPlacement group = place_strided(16, 1, 8);
  const double S = 1e9;
  const auto& node = job.cluster.node;
  const double nic = node.nic_bandwidth_bytes_per_s();
  const double t_network = (16.0 - 8.0) / 16.0 / (nic * 8.0 / 8.0);
  const double t_local =
      (8.0 - 1.0) / 16.0 / (node.intra.link_bandwidth_gbps * node.intra.busbw_efficiency * 1e9);
  const double expected = node.inter.latency_us * 1e-6 + S * std::max(t_network, t_local);
  EXPECT_NEAR(collective_cost(node, Collective::AllToAll, group, S).time_s, expected,
              1e-9 * expected);
}

TEST(Beyond3d, FsdpMemoryMatchesTheClosedForm) {
  // torchtitan FSDP2 (zero 3) over dp 8: fp32 weights, fp32 gradients and two Adam moments,
  // all sharded: 16 bytes per parameter / 8; plus two gathered 16-bit layers and one layer of
  // unsharded fp32 gradients.
  const Job job = job_from(R"({"framework": "torchtitan", "model": "llama3.1-8b",
      "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 8, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 1, "dp": 8, "zero_stage": 3, "micro_batch_size": 1}})");
  const MemoryEstimate mem = estimate_memory(job);
  const StageMemory& s = mem.stages[0];
  const double P = static_cast<double>(job.model.total_params(4096));
  EXPECT_NEAR(s.weights_bytes, 4 * P / 8, 1e-6 * s.weights_bytes);
  EXPECT_NEAR(s.gradients_bytes, 4 * P / 8, 1e-6 * s.gradients_bytes);
  EXPECT_NEAR(s.optimizer_bytes, 8 * P / 8, 1e-6 * s.optimizer_bytes);
  const auto stages = stage_parameters(job);
  const double layer = stages[0].largest_layer_params;
  EXPECT_NEAR(layer, static_cast<double>(job.model.layer_params(0)), 1.0);
  EXPECT_GE(s.transient_bytes, layer * (2 * 2 + 4));
  // ZeRO-1 (distributed optimizer) shards only the optimizer state.
  Job zero1 = job;
  zero1.framework = Framework::MegatronCore;
  zero1.plan.zero_stage = 1;
  const StageMemory z1 = estimate_memory(zero1).stages[0];
  EXPECT_NEAR(z1.weights_bytes, 2 * P, 1e-6 * z1.weights_bytes);
  EXPECT_NEAR(z1.gradients_bytes, 4 * P, 1e-6 * z1.gradients_bytes);
  EXPECT_NEAR(z1.optimizer_bytes, 12 * P / 8, 1e-6 * z1.optimizer_bytes);
}

TEST(Beyond3d, ContextParallelDividesActivationsAndShardsOptimizerOverDpTimesCp) {
  const std::string base =
      R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_nodes": 1},
      "training": {"global_batch_size": 8, "seq_length": 16384}, "plan": )";
  const Job cp1 = job_from(base + R"({"tp": 1, "pp": 1, "dp": 8, "cp": 1})" + "}");
  const Job cp4 = job_from(base + R"({"tp": 1, "pp": 1, "dp": 2, "cp": 4})" + "}");
  const StageMemory a = estimate_memory(cp1).stages[0];
  const StageMemory b = estimate_memory(cp4).stages[0];
  EXPECT_NEAR(b.activations_bytes, a.activations_bytes / 4, 0.01 * a.activations_bytes);
  // Megatron's distributed optimizer shards over dp x cp = 8 in both plans.
  EXPECT_NEAR(b.optimizer_bytes, a.optimizer_bytes, 1e-6 * a.optimizer_bytes);
}

}  // namespace
}  // namespace parplan::cost
