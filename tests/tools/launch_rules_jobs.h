// Jobs shared by the launch-rules tests of Megatron-LM (megatron_rules_test.cpp) and
// Megatron-Bridge (nemo_rules_test.cpp), which read the same pipeline split rules, and by the
// import tests (import_test.cpp), which export the planner's plans and read them back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/json_input.h"

namespace parplan::testing {

// A job file's text as the exports read it (plan keys checked where given; presets and model
// files from the source tree).
inline Job launch_job_from(const std::string& text) {
  return parse_job(parse_json(text, "job.json"), "job.json", PARPLAN_SOURCE_DIR,
                   PlanCheck::EnforceIfGiven);
}

// A job file's text without a plan: a model preset on `nodes` nodes of a node preset.
inline std::string job_text(const std::string& model, const std::string& node, int64_t nodes,
                            int64_t batch, int64_t seq, const std::string& precision = "bf16") {
  return R"({"model": ")" + model + R"(", "cluster": {"node": ")" + node + R"(", "num_nodes": )" +
         std::to_string(nodes) + R"(}, "training": {"global_batch_size": )" +
         std::to_string(batch) + R"(, "seq_length": )" + std::to_string(seq) +
         R"(, "precision": ")" + precision + R"("}})";
}

// Llama 3.1 405B (126 layers) on 512 GB200 with 128 model chunks, whose end chunks hold only
// the embedding and the output layer: pp 16 x vpp 8 (Bridge's own 405B recipes) and pp 128.
inline std::vector<Job> jobs_with_embedding_and_output_only_chunks() {
  std::vector<Job> jobs;
  for (const char* plan : {R"({"tp": 4, "pp": 16, "vpp": 8})", R"({"tp": 2, "pp": 128})"}) {
    jobs.push_back(
        launch_job_from(std::string(R"({"model": "llama3.1-405b", "cluster": {"node": "gb200-nvl72",
        "num_gpus": 512}, "training": {"global_batch_size": 1536, "seq_length": 8192}, "plan": )") +
                        plan + "}"));
  }
  return jobs;
}

}  // namespace parplan::testing
