// MoE token dispatch (cost_models/moe_dispatch.h): the deduplicated network copies against
// closed forms, the dispatcher the "auto" choice resolves to, the batch-level overlap's
// phases, and the relations a step must keep (deduplication never costs more than the
// all-to-all it replaces; overlap never slows a step).
#include "cost_models/moe_dispatch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/collective.h"
#include "core/json_input.h"
#include "core/presets.h"
#include "cost_models/collective_model.h"
#include "cost_models/layer_cost.h"
#include "cost_models/step_model.h"

namespace parplan::cost {
namespace {

Job job_from(const std::string& text) {
  return parse_job(parse_json(text, "job.json"), "job.json", "");
}

// Qwen3-235B-A22B (Qwen/Qwen3-235B-A22B config.json: 94 layers, hidden 4096, 64 heads, 4 KV
// groups, head_dim 128, 128 experts of 1536, top-8).
constexpr const char* kQwen235b =
    R"({"name": "qwen3-235b-a22b", "num_layers": 94, "hidden_size": 4096,
        "num_attention_heads": 64, "num_query_groups": 4, "head_dim": 128,
        "ffn_hidden_size": 12288, "vocab_size": 151936, "activation": "swiglu",
        "normalization": "rmsnorm", "tied_embeddings": false,
        "moe": {"num_experts": 128, "top_k": 8, "expert_ffn_hidden_size": 1536}})";

// Qwen3-235B on 32 DGX-H100 nodes, the Megatron-MoE-ModelZoo layout, with extra plan keys.
std::string qwen_job(const std::string& extra_plan,
                     const std::string& framework = "megatron-core") {
  return R"({"framework": ")" + framework + R"(", "model": )" + kQwen235b +
         R"(, "cluster": {"node": "dgx-h100", "num_nodes": 32},
             "training": {"global_batch_size": 2048, "seq_length": 4096},
             "plan": {"tp": 2, "pp": 8, "vpp": 4, "ep": 32, "sequence_parallel": true)" +
         extra_plan + "}}";
}

TEST(MoeDispatch, RemoteNodesFollowTheHypergeometricClosedForm) {
  // One expert per token (top-1): a token lands on another node with probability (N-1)/N.
  EXPECT_NEAR(expected_remote_nodes(64, 1, 4), 3.0 / 4.0, 1e-12);
  // Top-2 of 8 experts on 2 nodes (4 each): P(both on one given node) = C(4,2)/C(8,2) = 6/28,
  // so the other node is reached with probability 1 - 6/28.
  EXPECT_NEAR(expected_remote_nodes(8, 2, 2), 1.0 - 6.0 / 28.0, 1e-12);
  // Every expert on one node: nothing crosses.
  EXPECT_DOUBLE_EQ(expected_remote_nodes(128, 8, 1), 0.0);
  // A token never reaches more nodes than it has experts, nor more than exist.
  EXPECT_LE(expected_remote_nodes(256, 8, 64), 8.0);
  EXPECT_LE(expected_remote_nodes(256, 8, 4), 3.0);
  // Ranks reached: top-k of E experts over E ranks reaches exactly k.
  EXPECT_NEAR(expected_ranks_reached(32, 4, 32), 4.0, 1e-12);
}

TEST(MoeDispatch, DeduplicationSendsFewerNetworkCopiesThanTheAllToAll) {
  // The all-to-all sends k (N-1)/N copies of a token across nodes; the deduplicating
  // dispatcher at most one per other node, never more.
  for (int64_t nodes : {2, 4, 8, 16}) {
    for (int64_t k : {1, 2, 4, 8}) {
      const double all_to_all =
          static_cast<double>(k) * static_cast<double>(nodes - 1) / static_cast<double>(nodes);
      EXPECT_LE(expected_remote_nodes(128, k, nodes), all_to_all + 1e-12)
          << nodes << " nodes, top-" << k;
    }
  }
  // Top-1: equal (one copy, deduplication has nothing to remove).
  EXPECT_NEAR(expected_remote_nodes(128, 1, 8), 7.0 / 8.0, 1e-12);
}

TEST(MoeDispatch, InsideOneNodeTheDispatcherCostsTheAllToAll) {
  const NodeSpec node = *find_node_preset("dgx-h100");
  const GroupPlacement group = place_strided(8, 1, node.gpus_per_node);
  ASSERT_FALSE(group.crosses_nodes());
  const double tokens = 4096, token_bytes = 2 * 4096.0;
  const double a2a =
      collective_cost(node, Collective::AllToAll, group, tokens * token_bytes * 8).time_s;
  EXPECT_DOUBLE_EQ(dedup_dispatch_time_s(node, group, tokens, token_bytes, 128, 8), a2a);
}

TEST(MoeDispatch, AcrossNodesTheNetworkShareIsTheDeduplicatedCopies) {
  // 32 ranks, 4 per node on 8 nodes (tp 2 between them): the network part dominates; its time
  // is tokens * bytes * remote nodes over the GPU's NIC share, plus one network latency.
  const NodeSpec node = *find_node_preset("dgx-h100");
  const GroupPlacement group = place_strided(32, 2, node.gpus_per_node);
  ASSERT_EQ(group.nodes, 8);
  const double tokens = 2048, token_bytes = 2 * 4096.0;
  const double nic = static_cast<double>(node.inter.nics_per_node) *
                     node.nic_bandwidth_bytes_per_s() / static_cast<double>(node.gpus_per_node);
  const double expected =
      node.inter.latency_us * 1e-6 + tokens * token_bytes * expected_remote_nodes(128, 8, 8) / nic;
  EXPECT_NEAR(dedup_dispatch_time_s(node, group, tokens, token_bytes, 128, 8), expected,
              1e-9 * expected);
  const double a2a =
      collective_cost(node, Collective::AllToAll, group, tokens * token_bytes * 8).time_s;
  EXPECT_LT(dedup_dispatch_time_s(node, group, tokens, token_bytes, 128, 8), a2a);
}

TEST(MoeDispatch, AutoPicksDeepEpForMegatronCoreAcrossNodesOnly) {
  // Across nodes on H100: DeepEP; inside one node (ep 8 at tp 1): the all-to-all; a framework
  // without the recipe choice (torchtitan): the all-to-all; an explicit choice stands.
  const Job across = job_from(qwen_job(""));
  const CostContext ctx = CostContext::make(across, across.cluster.node);
  EXPECT_EQ(ctx.moe_dispatcher, MoeDispatcher::DeepEP);

  const Job inside = job_from(std::string(R"({"model": )") + kQwen235b +
                              R"(, "cluster": {"node": "dgx-h100", "num_nodes": 32},
          "training": {"global_batch_size": 2048, "seq_length": 4096},
          "plan": {"tp": 1, "pp": 16, "ep": 8}})");
  EXPECT_EQ(CostContext::make(inside, inside.cluster.node).moe_dispatcher, MoeDispatcher::AllToAll);

  const Job titan = job_from(qwen_job("", "torchtitan"));
  EXPECT_EQ(CostContext::make(titan, titan.cluster.node).moe_dispatcher, MoeDispatcher::AllToAll);

  const Job given = job_from(qwen_job(R"(, "moe_dispatcher": "alltoall")"));
  EXPECT_EQ(CostContext::make(given, given.cluster.node).moe_dispatcher, MoeDispatcher::AllToAll);
  const Job flex = job_from(qwen_job(R"(, "moe_dispatcher": "flex")"));
  EXPECT_EQ(flex.plan.moe_dispatcher, MoeDispatcher::DeepEP);
}

double permutation_bytes(const Job& job) {
  const ExplainedLayer layer = explain_layer(job, true);
  for (const OpRecord& op : layer.ops) {
    if (op.name == "token permutation") return op.bytes;
  }
  return 0;
}

TEST(MoeDispatch, DeepEpPermutesOnlyTheReceivedRows) {
  // The all-to-all dispatcher permutes the routed copies before sending and unpermutes them
  // after, and sorts the received chunks by local expert and back: four copies. DeepEP reads
  // the tokens in its dispatch kernel and sums them in its combine kernel, leaving the
  // receiver's permutation and its inverse: two. (etp 1: the received rows are the routed
  // copies, so the two counts are exactly 2:1.)
  const double alltoall =
      permutation_bytes(job_from(qwen_job(R"(, "etp": 1, "moe_dispatcher": "alltoall")")));
  const double deepep =
      permutation_bytes(job_from(qwen_job(R"(, "etp": 1, "moe_dispatcher": "deepep")")));
  ASSERT_GT(deepep, 0.0);
  EXPECT_NEAR(alltoall, 2 * deepep, 1e-9 * alltoall);
  // HybridEP permutes inside its dispatch as the all-to-all does around it.
  EXPECT_NEAR(permutation_bytes(job_from(qwen_job(R"(, "etp": 1, "moe_dispatcher": "hybridep")"))),
              alltoall, 1e-9 * alltoall);
}

TEST(MoeDispatch, DeduplicationNeverSlowsAStep) {
  const double auto_step = estimate_step(job_from(qwen_job(""))).step_time_s;
  const StepEstimate all_to_all =
      estimate_step(job_from(qwen_job(R"(, "moe_dispatcher": "alltoall")")));
  EXPECT_LT(auto_step, all_to_all.step_time_s);
  EXPECT_DOUBLE_EQ(estimate_step(job_from(qwen_job(R"(, "moe_dispatcher": "deepep")"))).step_time_s,
                   auto_step);
}

TEST(MoeDispatch, OverlapPhasesHideEachAllToAllUnderTheOtherMicroBatchsCompute) {
  // Phases of the combined 1F1B: an all-to-all of 2 ms beside attention (1 ms) and MoE (3 ms)
  // work: each attention phase leaves 1 ms exposed, each MoE phase none.
  const MoeLayerCompute compute{1e-3, 3e-3, 1e-3, 3e-3};
  const ExposedA2a exposed = overlapped_a2a_exposure(compute, 2e-3);
  EXPECT_NEAR(exposed.forward, 1e-3, 1e-15);   // combine_fwd beside attention bwd
  EXPECT_NEAR(exposed.backward, 1e-3, 1e-15);  // combine_bwd beside attention fwd
  // No computation beside: everything is exposed, as without overlap (4 all-to-alls).
  const ExposedA2a bare = overlapped_a2a_exposure({}, 2e-3);
  EXPECT_NEAR(bare.forward + bare.backward, 4 * 2e-3, 1e-15);
}

TEST(MoeDispatch, OverlapNeverSlowsAStepAndOnlyEpCommunicationShrinks) {
  const StepEstimate plain = estimate_step(job_from(qwen_job("")));
  const StepEstimate overlapped = estimate_step(job_from(qwen_job(R"(, "moe_a2a_overlap": true)")));
  EXPECT_LT(overlapped.step_time_s, plain.step_time_s);
  EXPECT_LT(overlapped.breakdown.ep_comm, plain.breakdown.ep_comm);
}

// Activations the overlap adds on a stage, in layers of that stage's per-layer share.
double extra_layers(const StageMemory& plain, const StageMemory& overlapped, double layers) {
  const double per_layer =
      plain.activations_bytes / (static_cast<double>(plain.in_flight_chunks) * layers);
  return (overlapped.activations_bytes - plain.activations_bytes) / per_layer;
}

TEST(MoeDispatch, WithoutPipeliningTheOverlapKeepsOneMoreLayerAlive) {
  // Combined 1F1B without pipelining: micro-batch i + 1's forward of layer l beside micro-batch
  // i's backward of layer L-1-l, whose state is released right after: one micro-batch of
  // activations plus one layer, where plain gradient accumulation keeps one micro-batch.
  const std::string job =
      R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100", "num_nodes": 2},
      "training": {"global_batch_size": 64, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 1, "ep": 16)";
  const StepEstimate plain = estimate_step(job_from(job + "}}"));
  const StepEstimate overlapped = estimate_step(job_from(job + R"(, "moe_a2a_overlap": true}})"));
  EXPECT_EQ(plain.memory.stages.front().in_flight_chunks, 1);
  EXPECT_EQ(overlapped.memory.stages.front().in_flight_chunks, 1);
  // 48 MoE layers; the output layer's inputs make the per-layer share slightly large.
  const double extra =
      extra_layers(plain.memory.stages.front(), overlapped.memory.stages.front(), 48);
  EXPECT_GT(extra, 0.95);
  EXPECT_LE(extra, 1.0);
  EXPECT_GT(overlapped.memory.peak_bytes, plain.memory.peak_bytes);
}

TEST(MoeDispatch, FillAndDrainChunksHaveNoPartnerToHideTheirAllToAlls) {
  // Without pipelining the first forward and the last backward run alone: 1 of m micro-batches.
  const PipelineShape plain{ScheduleKind::OneFOneB, 1, 1, 8};
  EXPECT_DOUBLE_EQ(unpaired_chunk_fraction(plain, 0), 1.0 / 8);
  EXPECT_DOUBLE_EQ(unpaired_chunk_fraction({ScheduleKind::OneFOneB, 1, 1, 1}, 0), 1.0);
  // Interleaved pp 8, vpp 4, 128 micro-batches (512 chunks a stage): Megatron-Core's warm-up
  // (8 - s - 1) * 2 + 3 * 8 forwards plus the overlap's one more: 39 on stage 0, 25 on stage 7,
  // on average pp * vpp = 32 of 512, pp / m.
  const PipelineShape interleaved{ScheduleKind::Interleaved, 8, 4, 128};
  EXPECT_DOUBLE_EQ(unpaired_chunk_fraction(interleaved, 0), 39.0 / 512);
  EXPECT_DOUBLE_EQ(unpaired_chunk_fraction(interleaved, 7), 25.0 / 512);
  double sum = 0;
  for (int64_t s = 0; s < 8; ++s) sum += unpaired_chunk_fraction(interleaved, s);
  EXPECT_NEAR(sum / 8, 8.0 / 128, 1e-15);
  // All chunks in warm-up: nothing is paired.
  EXPECT_DOUBLE_EQ(unpaired_chunk_fraction({ScheduleKind::Interleaved, 8, 2, 4}, 0), 1.0);
}

TEST(MoeDispatch, OneMicroBatchHasNoPartnerSoTheOverlapHidesNothing) {
  // The Megatron-LM docs (moe_a2a_overlap.md): with one micro-batch there is no forward/backward
  // pair, so the overlap changes no time; with more, the exposed share shrinks as 1/m.
  const std::string job =
      R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100", "num_nodes": 2},
      "training": {"global_batch_size": GBS, "seq_length": 4096},
      "plan": {"tp": 1, "pp": 1, "ep": 16, "moe_dispatcher": "deepep")";
  auto step = [&job](int gbs, bool overlap) {
    std::string text = job;
    text.replace(text.find("GBS"), 3, std::to_string(gbs));
    return estimate_step(job_from(text + (overlap ? R"(, "moe_a2a_overlap": true}})" : "}}")));
  };
  const StepEstimate one_plain = step(16, false);
  const StepEstimate one_overlapped = step(16, true);
  EXPECT_NEAR(one_overlapped.breakdown.ep_comm, one_plain.breakdown.ep_comm,
              1e-9 * one_plain.breakdown.ep_comm);
  EXPECT_NEAR(one_overlapped.breakdown.compute, one_plain.breakdown.compute,
              1e-9 * one_plain.breakdown.compute);
  const StepEstimate four = step(64, true);
  const StepEstimate sixteen = step(256, true);
  EXPECT_GT(four.breakdown.ep_comm / 4, sixteen.breakdown.ep_comm / 16);
  EXPECT_LT(four.breakdown.ep_comm, one_plain.breakdown.ep_comm * 4);
}

TEST(MoeDispatch, DeepEpBesideAGemmCostsItAFifthOnAnH100) {
  // Megatron Core MoE report (arXiv 2603.07685 §4.2.3): DeepEP's 20 SMs cost a concurrent GEMM
  // about 20% of its efficiency on an H100; a NCCL all-to-all holds 16 of its 132 SMs. The
  // overlapped layer's computation is the plain layer's plus that share of what it hid.
  auto check = [](const std::string& dispatcher, double share) {
    SCOPED_TRACE(dispatcher);
    const std::string keys = R"(, "moe_dispatcher": ")" + dispatcher + R"(")";
    const LayerTime plain = explain_layer(job_from(qwen_job(keys)), true).time;
    const LayerTime overlapped =
        explain_layer(job_from(qwen_job(keys + R"(, "moe_a2a_overlap": true)")), true).time;
    const PairedA2a& paired = overlapped.paired_a2a;
    ASSERT_GT(paired.hidden_forward, 0);
    ASSERT_GT(paired.hidden_backward, 0);
    EXPECT_NEAR(overlapped.forward.compute - plain.forward.compute, share * paired.hidden_forward,
                1e-9 * plain.forward.compute);
    EXPECT_NEAR(overlapped.backward.compute - plain.backward.compute,
                share * paired.hidden_backward, 1e-9 * plain.backward.compute);
    EXPECT_NEAR(overlapped.forward.ep_comm, plain.forward.ep_comm - paired.hidden_forward,
                1e-9 * plain.forward.ep_comm);
  };
  check("deepep", 0.20);
  check("alltoall", 16.0 / 132.0);
}

TEST(MoeDispatch, TheOverlapsUnpairedShareFollowsTheBatchNotTheCachedLayerTimes) {
  // The planner reuses layer times across plans of one layer_times_key, which holds neither
  // the batch nor pp: the fill and drain share is applied per chunk by the step model, so
  // reused layer times give the fresh estimate, and more micro-batches expose less per
  // micro-batch.
  const Job small = job_from(qwen_job(R"(, "moe_a2a_overlap": true)"));
  Job large = small;
  large.training.global_batch_size *= 4;
  const LayerTimes reused = compute_layer_times(small);
  EXPECT_EQ(layer_times_key(small.plan), layer_times_key(large.plan));
  const StepEstimate fresh = estimate_step(large);
  EXPECT_DOUBLE_EQ(estimate_step(large, reused).step_time_s, fresh.step_time_s);
  const StepEstimate few = estimate_step(small);
  EXPECT_GT(few.breakdown.ep_comm / static_cast<double>(few.num_micro_batches),
            fresh.breakdown.ep_comm / static_cast<double>(fresh.num_micro_batches));
}

TEST(MoeDispatch, WithPipeliningTheOverlapsExtraWarmUpForwardIsTheChunkPlainOneFOneBHolds) {
  // Megatron-Core's combined 1F1B adds one warm-up forward to the interleaved schedule
  // (schedules.py): the chunks plain 1F1B holds at its peak (warm-up + 1) are alive when the
  // combined steps start, and each of those holds one more layer (the forward beside the
  // backward that releases its layers one by one).
  const StepEstimate plain = estimate_step(job_from(qwen_job("")));
  const StepEstimate overlapped = estimate_step(job_from(qwen_job(R"(, "moe_a2a_overlap": true)")));
  ASSERT_EQ(plain.memory.stages.size(), overlapped.memory.stages.size());
  for (std::size_t s = 0; s < plain.memory.stages.size(); ++s) {
    EXPECT_EQ(overlapped.memory.stages[s].in_flight_chunks, plain.memory.stages[s].in_flight_chunks)
        << "stage " << s;
  }
  EXPECT_EQ(overlapped.memory.stages.front().in_flight_chunks, 39);  // (8-1)*2 + 3*8 + 1
  // Every stage: more than nothing, less than a chunk (94 layers over 32 chunks: about 3).
  for (std::size_t s = 0; s < plain.memory.stages.size(); ++s) {
    const StageMemory& a = plain.memory.stages[s];
    const StageMemory& b = overlapped.memory.stages[s];
    EXPECT_GT(b.activations_bytes, a.activations_bytes) << "stage " << s;
    EXPECT_LT(b.activations_bytes - a.activations_bytes,
              0.5 * a.activations_bytes / static_cast<double>(a.in_flight_chunks))
        << "stage " << s;
  }
}

TEST(MoeDispatch, TheLayerTimesCacheTellsDispatchersAndOverlapApart) {
  // The planner reuses per-layer times across plans with one key: plans that differ only in the
  // dispatcher or the overlap have different layer times, so different keys.
  const ParallelPlan plain = job_from(qwen_job("")).plan;
  const ParallelPlan overlapped = job_from(qwen_job(R"(, "moe_a2a_overlap": true)")).plan;
  const ParallelPlan all_to_all = job_from(qwen_job(R"(, "moe_dispatcher": "alltoall")")).plan;
  EXPECT_NE(layer_times_key(plain), layer_times_key(overlapped));
  EXPECT_NE(layer_times_key(plain), layer_times_key(all_to_all));
}

TEST(MoeDispatch, OverlapFollowsMegatronCoresRules) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      job_from(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  // pp > 1 needs virtual pipeline stages; full recomputation and MoE recomputation exclude it;
  // a dense model has no dispatcher.
  EXPECT_NE(error_of(std::string(R"({"model": )") + kQwen235b +
                     R"(, "cluster": {"node": "dgx-h100", "num_nodes": 32},
                    "training": {"global_batch_size": 2048, "seq_length": 4096},
                    "plan": {"tp": 2, "pp": 8, "ep": 32, "sequence_parallel": true,
                             "moe_a2a_overlap": true}})")
                .find("plan.moe_a2a_overlap"),
            std::string::npos);
  EXPECT_NE(error_of(qwen_job(R"(, "recompute": "full", "moe_a2a_overlap": true)"))
                .find("plan.moe_a2a_overlap"),
            std::string::npos);
  EXPECT_NE(
      error_of(
          qwen_job(
              R"(, "recompute": "selective", "recompute_modules": ["moe"], "moe_a2a_overlap": true)"))
          .find("plan.moe_a2a_overlap"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"model": "llama3.1-8b", "cluster": {"node": "dgx-h100", "num_gpus": 8},
                         "training": {"global_batch_size": 8, "seq_length": 4096},
                         "plan": {"moe_dispatcher": "deepep"}})")
                .find("plan.moe_dispatcher"),
            std::string::npos);
  EXPECT_EQ(error_of(qwen_job(R"(, "moe_a2a_overlap": true)")), "");
}

}  // namespace
}  // namespace parplan::cost
