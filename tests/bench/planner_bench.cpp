// Speed targets (time-model and planner issues): one plan evaluated in <= 50 us median;
// Llama-3.1-405B on 16,384 H100 (2048 dgx-h100 nodes), global batch 2048 x 8192, whole
// default search <= 1 s wall on 2 cores; GPT-3 175B on 1,024 A100 <= 0.2 s; DeepSeek-V3 (MoE:
// ep, expert tp, dispatchers and the all-to-all overlap widen the space) on 16,384 H100, global
// batch 16384 x 4096 in fp8, <= 1 s.
#include <benchmark/benchmark.h>

#include "cost_models/step_model.h"
#include "planner/search.h"

namespace {

using namespace parplan;

Job make_job(const std::string& model, const std::string& node, int64_t nodes, int64_t gbs,
             int64_t seq, const std::string& plan, PlanCheck check = PlanCheck::Enforce) {
  const std::string text = R"({"framework": "megatron-core", "model": ")" + model +
                           R"(", "cluster": {"node": ")" + node + R"(", "num_nodes": )" +
                           std::to_string(nodes) + R"(}, "training": {"global_batch_size": )" +
                           std::to_string(gbs) + R"(, "seq_length": )" + std::to_string(seq) +
                           R"(}, "plan": )" + plan + "}";
  return parse_job(parse_json(text, "bench.json"), "bench.json", "", check);
}

void BM_EvaluateOnePlan_Gpt3_175B_384xA100(benchmark::State& state) {
  const Job job = make_job("gpt3-175b", "dgx-a100-80gb", 48, 1536, 2048,
                           R"({"tp": 8, "pp": 12, "dp": 4, "micro_batch_size": 1})");
  for (auto _ : state) benchmark::DoNotOptimize(cost::estimate_step(job).step_time_s);
}
BENCHMARK(BM_EvaluateOnePlan_Gpt3_175B_384xA100)->Unit(benchmark::kMicrosecond);

void BM_EvaluateOnePlan_Llama405B_Interleaved(benchmark::State& state) {
  const Job job = make_job("llama3.1-405b", "dgx-h100", 128, 512, 8192,
                           R"({"tp": 8, "pp": 8, "cp": 2, "vpp": 8})");
  for (auto _ : state) benchmark::DoNotOptimize(cost::estimate_step(job).step_time_s);
}
BENCHMARK(BM_EvaluateOnePlan_Llama405B_Interleaved)->Unit(benchmark::kMicrosecond);

void run_search(benchmark::State& state, const Job& job) {
  planner::SearchOptions options;
  options.threads = 2;
  options.top_k = 10;
  int64_t valid = 0;
  for (auto _ : state) {
    const auto result = planner::search_plans(job, options);
    valid = result.valid;
    benchmark::DoNotOptimize(result.top.size());
  }
  state.counters["plans_per_s"] =
      benchmark::Counter(static_cast<double>(valid), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Search_Llama405B_16384xH100(benchmark::State& state) {
  run_search(state, make_job("llama3.1-405b", "dgx-h100", 2048, 2048, 8192, "{}", PlanCheck::Skip));
}
BENCHMARK(BM_Search_Llama405B_16384xH100)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Search_DeepSeekV3_16384xH100(benchmark::State& state) {
  Job job = make_job("deepseek-v3", "dgx-h100", 2048, 16384, 4096, "{}", PlanCheck::Skip);
  job.training.precision = Precision::Fp8;
  run_search(state, job);
}
BENCHMARK(BM_Search_DeepSeekV3_16384xH100)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Search_Gpt3_175B_1024xA100(benchmark::State& state) {
  run_search(state, make_job("gpt3-175b", "dgx-a100-80gb", 128, 1536, 2048, "{}", PlanCheck::Skip));
}
BENCHMARK(BM_Search_Gpt3_175B_1024xA100)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
