// A Qwen3-235B-A22B-shaped MoE job (torchtitan's qwen3 235B-A22B flavor) on 32 DGX-H100 nodes,
// tp2 pp8 vpp4 ep32 with sequence parallelism: the expert-parallel group spans 4 nodes, so
// Megatron-Core's "auto" dispatcher is DeepEP. Shared by the export and import tests of the MoE
// dispatcher and the all-to-all overlap.
#pragma once

#include <string>

#include "core/job.h"
#include "core/json_input.h"

namespace parplan::testing {

// `extra` adds plan keys (", \"moe_a2a_overlap\": true").
inline Job qwen3_235b_job(const std::string& extra) {
  const std::string text =
      R"({"model": {"name": "qwen3-235b-like", "num_layers": 94, "hidden_size": 4096,
      "num_attention_heads": 64, "num_query_groups": 4, "head_dim": 128,
      "ffn_hidden_size": 12288, "vocab_size": 151936, "activation": "swiglu",
      "normalization": "rmsnorm", "tied_embeddings": false, "qk_norm": true,
      "rotary_base": 1000000,
      "moe": {"num_experts": 128, "top_k": 8, "expert_ffn_hidden_size": 1536}},
      "cluster": {"node": "dgx-h100", "num_nodes": 32},
      "training": {"global_batch_size": 2048, "seq_length": 4096},
      "plan": {"tp": 2, "pp": 8, "vpp": 4, "ep": 32, "sequence_parallel": true)" +
      extra + "}}";
  return parse_job(parse_json(text, "job.json"), "job.json", "", PlanCheck::Enforce);
}

}  // namespace parplan::testing
