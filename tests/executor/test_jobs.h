// Tiny GPT jobs for the executor tests: "gpt" (learned positions, layernorm, gelu, tied) and
// "llama" (rotary, rmsnorm, swiglu, untied, vocabulary 63 so tp=2 needs padding).
#pragma once

#include <string>

#include "core/job.h"

namespace parplan::executor::testing {

inline Json tiny_model(const std::string& flavour, int64_t layers = 4) {
  Json m = {{"name", "tiny-" + flavour}, {"num_layers", layers},  {"hidden_size", 32},
            {"num_attention_heads", 4},  {"num_query_groups", 2}, {"vocab_size", 64}};
  if (flavour == "llama") {
    m["activation"] = "swiglu";
    m["normalization"] = "rmsnorm";
    m["position_embedding"] = "rotary";
    m["tied_embeddings"] = false;
    m["vocab_size"] = 63;
    m["ffn_hidden_size"] = 64;
  }
  return m;
}

inline Job tiny_job(Json plan, const std::string& flavour = "gpt", int64_t layers = 4,
                    int64_t global_batch = 8, int64_t seq = 16) {
  if (plan.is_null()) plan = Json::object();
  int64_t gpus = 1;
  for (const char* key : {"tp", "pp", "dp"}) gpus *= plan.value(key, int64_t{1});
  const Json job = {{"model", tiny_model(flavour, layers)},
                    {"cluster", {{"node", "dgx-h100"}, {"num_gpus", gpus}}},
                    {"training", {{"global_batch_size", global_batch}, {"seq_length", seq}}},
                    {"plan", plan}};
  return parse_job(job, "<test>", "");
}

}  // namespace parplan::executor::testing
