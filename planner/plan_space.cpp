#include "planner/plan_space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "core/check.h"
#include "core/frameworks/registry.h"
#include "planner/framework_support.h"
#include "planner/parallel_for.h"

namespace parplan::planner {

namespace {

// The same bounds as the job file's plan keys (core/parallel_plan.cpp), so that products of
// pinned degrees cannot overflow.
constexpr int64_t kMaxFixedDegree = 1'000'000;
constexpr int64_t kMaxFixedVpp = 1024;

int64_t parse_positive(const std::string& key, const std::string& value,
                       int64_t max = kMaxFixedDegree) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(value, &used);
    if (used == value.size() && v >= 1 && v <= max) return v;
  } catch (const std::exception&) {
  }
  throw InputError("--fix", key, "\"" + value + "\"",
                   "a positive integer up to " + std::to_string(max));
}

std::vector<int64_t> fixed_or(const std::optional<int64_t>& fix, std::vector<int64_t> options) {
  if (fix) return {*fix};
  return options;
}

// "1.25" for a limit in messages.
std::string fixed_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// Layers per chunk are balanced enough: ceil(L / chunks) <= limit * L / chunks.
bool split_balanced(int64_t layers, int64_t chunks, double limit) {
  if (chunks > layers + kEndChunksWithoutLayers) return false;
  const double mean = static_cast<double>(layers) / static_cast<double>(chunks);
  const double largest = std::ceil(mean);
  return largest <= limit * mean + 1e-9;
}

// The model-parallel degrees of a plan and the data-parallel degree they leave.
struct Layout {
  int64_t tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, vpp = 1;
  int64_t etp = 0;  // expert tensor-parallel size; 0 = ParallelPlan::expert_tp()'s rule
};

// Expert tensor-parallel sizes of a MoE layout: the rule's (0), and with tp > 1 experts
// without tensor parallelism (etp 1: Megatron-Core --expert-tensor-parallel-size 1, the
// DeepSeek-V3 / Qwen3 MoE recipes), which trades the expert-TP all-gathers for more experts'
// weights per GPU.
std::vector<int64_t> expert_tp_options(const ModelSpec& model, const Layout& l,
                                       const PlanFixes& fixes) {
  if (fixes.etp) return {*fixes.etp};
  if (!model.moe || l.tp == 1 || (l.dp * l.cp) % l.ep != 0) return {0};
  return {0, 1};
}

// Virtual stages per pipeline stage: 2 to max_vpp, and beyond it every count that splits each
// stage's layers into equal whole chunks (Megatron-Core needs num_layers % (pp * vpp) == 0
// for its default split), down to one layer per chunk: the published Nemotron-4 340B run
// (tests/data/published_runs.json, dgxc_nemotron4_340b_fp8_128gpu) uses pp 8, vpp 12 on 96
// layers. So does every count that splits num_layers + 2 evenly, the embedding and the output
// layer counted as one layer each (Megatron-Core's account_for_embedding_in_pipeline_split and
// account_for_loss_in_pipeline_split; core/parallel_plan.h layers_per_chunk).
std::vector<int64_t> virtual_stage_counts(int64_t num_layers, int64_t pp,
                                          const SpaceLimits& limits) {
  std::vector<int64_t> vpps = {1};
  if (pp == 1) return vpps;
  for (int64_t v = 2; v <= limits.max_vpp; ++v) vpps.push_back(v);
  for (const int64_t units : {num_layers, num_layers + kEndChunksWithoutLayers}) {
    if (units % pp != 0) continue;
    for (int64_t v : divisors(units / pp)) {
      if (v > limits.max_vpp && std::find(vpps.begin(), vpps.end(), v) == vpps.end()) {
        vpps.push_back(v);
      }
    }
  }
  std::sort(vpps.begin(), vpps.end());
  return vpps;
}

// Every layout of the space in the order tp, cp, pp, ep, vpp (each ascending, or its pinned
// value); combinations that are no layout are counted in `out` by reason.
std::vector<Layout> enumerate_layouts(const Job& job, const PlanFixes& fixes,
                                      const SpaceLimits& limits, Enumeration& out) {
  const ModelSpec& model = job.model;
  const int64_t gpus = job.cluster.num_gpus;
  const int64_t gpn = job.cluster.node.gpus_per_node;
  std::vector<int64_t> tps;
  for (int64_t tp : divisors(gpus)) {
    if (tp <= std::max<int64_t>(1, limits.max_tp_nodes * gpn) && tp <= model.num_attention_heads) {
      tps.push_back(tp);
    }
  }
  std::vector<int64_t> cps;
  for (int64_t cp : divisors(gpus)) {
    if (cp <= limits.max_cp && job.training.seq_length / cp >= limits.min_tokens_per_cp_rank)
      cps.push_back(cp);
  }
  if (cps.empty()) cps.push_back(1);
  std::vector<int64_t> eps = {1};
  if (model.moe) eps = divisors(model.moe->num_experts);
  auto reject = [&](const std::string& reason, const std::string& example) {
    ++out.considered;
    ++out.rejected[reason];
    out.examples.try_emplace(reason, example);
  };
  const std::string str_gpus = std::to_string(gpus);
  auto uneven = [&](int64_t chunks) {
    return "plan.pp: found " + std::to_string(chunks) + " model chunks (pp*vpp) for " +
           std::to_string(model.num_layers) + " layers; allowed: chunks whose largest holds at " +
           "most " + fixed_text(limits.max_chunk_imbalance) + " x the mean layer count";
  };

  std::vector<Layout> layouts;
  for (int64_t tp : fixed_or(fixes.tp, tps)) {
    for (int64_t cp : fixed_or(fixes.cp, cps)) {
      if (gpus % (tp * cp) != 0) {
        reject("gpu-count", "plan.tp: found tp*cp = " + std::to_string(tp) + "*" +
                                std::to_string(cp) + " = " + std::to_string(tp * cp) +
                                "; allowed: a product that divides the cluster's " + str_gpus +
                                " GPUs");
        continue;
      }
      std::vector<int64_t> pps;
      for (int64_t pp : divisors(gpus / (tp * cp))) {
        // The default space's stages alone stop at one layer each (a pinned pp may go on to
        // num_layers + 2): plans with an embedding-only or output-only chunk come from
        // virtual stages (virtual_stage_counts), as the published ones do.
        if (pp <= model.num_layers) pps.push_back(pp);
      }
      for (int64_t pp : fixed_or(fixes.pp, pps)) {
        if (gpus % (tp * cp * pp) != 0) {
          reject("gpu-count", "plan.pp: found tp*cp*pp = " + std::to_string(tp * cp * pp) +
                                  "; allowed: a product that divides the cluster's " + str_gpus +
                                  " GPUs");
          continue;
        }
        const int64_t dp = gpus / (tp * cp * pp);
        if (fixes.dp && *fixes.dp != dp) continue;  // outside the pinned part of the space
        if (!split_balanced(model.num_layers, pp, limits.max_chunk_imbalance)) {
          reject("uneven-split-limit", uneven(pp));
          continue;
        }
        const std::vector<int64_t> vpps = virtual_stage_counts(model.num_layers, pp, limits);
        for (int64_t ep : fixed_or(fixes.ep, eps)) {
          for (int64_t vpp : fixed_or(fixes.vpp, vpps)) {
            if (vpp > 1 &&
                !split_balanced(model.num_layers, pp * vpp, limits.max_chunk_imbalance)) {
              reject("uneven-split-limit", uneven(pp * vpp));
              continue;
            }
            const Layout layout{tp, cp, pp, dp, ep, vpp};
            for (int64_t etp : expert_tp_options(model, layout, fixes)) {
              layouts.push_back(layout);
              layouts.back().etp = etp;
            }
          }
        }
      }
    }
  }
  return layouts;
}

// Micro-batch sizes: the divisors of the per-replica batch up to the limit (1 when dp does
// not divide the global batch; check_plan then rejects the plan, batch-by-dp-mbs).
std::vector<int64_t> micro_batch_sizes(const TrainingSpec& training, int64_t dp,
                                       const SpaceLimits& limits) {
  const int64_t local = training.global_batch_size % dp == 0 ? training.global_batch_size / dp : 0;
  if (local == 0) return {1};
  std::vector<int64_t> sizes;
  for (int64_t mbs : divisors(local)) {
    if (mbs <= limits.max_micro_batch_size) sizes.push_back(mbs);
  }
  return sizes;
}

// Sequence parallelism is an option where tensor parallelism is.
std::vector<bool> sequence_parallel_options(const Layout& layout, const PlanFixes& fixes) {
  if (fixes.sequence_parallel) return {*fixes.sequence_parallel};
  if (layout.tp > 1) return {false, true};
  return {false};
}

// Schedules: interleaved for several chunks per stage; 1F1B, zero-bubble and, where the
// framework runs it (DeepSeek-V3's DualPipe, published by a run of "other" software),
// DualPipe for one.
std::vector<ScheduleKind> schedule_options(const Job& job, const Layout& layout,
                                           const PlanFixes& fixes) {
  if (fixes.schedule) return {*fixes.schedule};
  if (layout.vpp > 1) return {ScheduleKind::Interleaved};
  if (layout.pp == 1) return {ScheduleKind::OneFOneB};
  std::vector<ScheduleKind> out = {ScheduleKind::OneFOneB, ScheduleKind::ZeroBubble};
  if (framework_info(job.framework).planner_support.allows_schedule(ScheduleKind::DualPipe)) {
    out.push_back(ScheduleKind::DualPipe);
  }
  return out;
}

// Offloaded layer counts to try for a plan: none, and with SpaceLimits::memory_savers
// half or all but one of the layers (Megatron-Bridge's GB200 Llama 3 70B recipes offload 20
// or 40 of 80) where offloading can apply: no pipelining, no recomputation.
std::vector<int64_t> offload_options(const Job& job, const Layout& layout, Recompute recompute,
                                     const SpaceLimits& limits) {
  const int64_t layers = job.model.num_layers;
  if (!limits.memory_savers || layout.pp > 1 || recompute != Recompute::None || layers < 2 ||
      job.cluster.node.host_link_gbps <= 0 ||
      !framework_info(job.framework).planner_support.activation_offload) {
    return {0};
  }
  if (layers / 2 == layers - 1) return {0, layers - 1};
  return {0, layers / 2, layers - 1};
}

// Megatron-Core's batch-level all-to-all overlap where the framework runs it and the layout
// allows it (expert parallelism; virtual pipeline stages when pipelining; no full
// recomputation; a 16-bit model: core/parallel_plan.h check_plan).
std::vector<bool> a2a_overlap_options(const Job& job, const Layout& layout, Recompute recompute,
                                      const PlanFixes& fixes) {
  if (fixes.moe_a2a_overlap) return {*fixes.moe_a2a_overlap};
  if (layout.ep <= 1 || (layout.pp > 1 && layout.vpp <= 1) || recompute == Recompute::Full ||
      job.training.precision == Precision::Fp32 ||
      !framework_info(job.framework).planner_support.moe_a2a_overlap) {
    return {false};
  }
  // The overlap never slows a step but keeps about one more layer alive (memory_model.cpp):
  // both are tried, so that a plan at the memory limit can run without it.
  return {false, true};
}

// Megatron recompute module sets to try with selective recomputation: the default (0, the
// attention core), and with SpaceLimits::memory_savers the norms with the dense MLP or the
// experts' activation (Megatron-Bridge's GPT-OSS recipes: layernorm, moe_act), plus MLA's
// up-projections (its DeepSeek-V3 recipes: mla_up_proj, mlp).
std::vector<unsigned> recompute_module_options(const Job& job, Recompute recompute,
                                               const SpaceLimits& limits) {
  namespace rm = recompute_module;
  if (!limits.memory_savers || recompute != Recompute::Selective ||
      !framework_info(job.framework).planner_support.recompute_modules) {
    return {0};
  }
  unsigned modules = rm::kLayernorm | (job.model.moe ? rm::kMoeAct : rm::kMlp);
  if (job.model.mla) modules |= rm::kMlaUpProj;
  return {0, modules};
}

// Layer splits to try for a layout: the default (empty: core/parallel_plan.h layers_per_chunk)
// and, where the framework takes any split (PlannerSupport::explicit_layer_split), one layer
// moved from the last stage's last chunk to the last chunk of the stage with the fewest layers
// among the others (ties: the one nearest stage floor((pp - 1) / 2); with pp 2, the first
// stage, which also holds the embedding). The output layer and loss make the last stage the
// slowest, and a
// pipeline runs at the pace of its slowest stage: Megatron-Bridge's Llama 3 70B H100 FP8
// recipe pins "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL" on pp 8, vpp 5 for that reason (v0.6.0,
// src/megatron/bridge/perf_recipes/llama/h100/llama3.py). Offered only when the output
// layer's matmul is at least half a layer's (vocabulary x hidden against the mean layer's
// parameters that touch a token): otherwise the receiving stage becomes the slowest.
std::vector<std::vector<int64_t>> layer_split_options(const Job& job, const Layout& layout) {
  std::vector<std::vector<int64_t>> out = {{}};
  const ModelSpec& m = job.model;
  if (layout.pp < 2 || !framework_info(job.framework).planner_support.explicit_layer_split) {
    return out;
  }
  const double layer_params =
      static_cast<double>(m.active_params(job.training.seq_length) -
                          m.embedding_params(job.training.seq_length) - m.output_layer_params()) /
      static_cast<double>(m.num_layers);
  const double head_params = static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
  if (head_params < 0.5 * layer_params) return out;
  ParallelPlan plan;
  plan.pp = layout.pp;
  plan.vpp = layout.vpp;
  std::vector<int64_t> chunks = layers_per_chunk(m, plan);
  const std::size_t last = chunks.size() - 1;
  if (chunks[last] < 1) return out;
  const std::size_t pp = static_cast<std::size_t>(layout.pp);
  const std::vector<int64_t> stage_layers = stage_layer_counts(chunks, layout.pp);
  const std::size_t middle = (pp - 1) / 2;
  std::size_t target = middle;
  for (std::size_t s = 0; s + 1 < pp; ++s) {
    const auto distance = [&](std::size_t x) { return x > middle ? x - middle : middle - x; };
    if (stage_layers[s] < stage_layers[target] ||
        (stage_layers[s] == stage_layers[target] && distance(s) < distance(target))) {
      target = s;
    }
  }
  --chunks[last];
  ++chunks[(static_cast<std::size_t>(layout.vpp) - 1) * pp + target];  // its last chunk
  out.push_back(std::move(chunks));
  return out;
}

// Rejection counts by reason. Rejections come in runs of one reason (the inner loops vary one
// key), so the last reason's count is kept at hand instead of looked up in the map each time.
class RejectionCounter {
 public:
  explicit RejectionCounter(Enumeration& out) : out_(out) {}
  // Counts one rejection; `example` (called only for a reason not yet counted here) words the
  // first one.
  template <typename Example>
  void count(std::string_view reason, const Example& example) {
    if (last_ == nullptr || reason != last_reason_) {
      last_reason_.assign(reason);
      last_ = &out_.rejected[last_reason_];
      if (!out_.examples.count(last_reason_)) out_.examples[last_reason_] = example();
    }
    ++*last_;
  }

 private:
  Enumeration& out_;
  std::string last_reason_;
  int64_t* last_ = nullptr;
};

// Counts a candidate plan: a valid one goes to out.plans, the others are counted by reason.
void add_candidate(const Job& job, const ParallelPlan& p, Enumeration& out,
                   RejectionCounter& rejections) {
  ++out.considered;
  if (auto violation = check_plan(job.model, job.cluster, job.training, p)) {
    rejections.count(violation->reason, [&] {
      return violation->key_path + ": found " + violation->found +
             "; allowed: " + violation->allowed;
    });
  } else if (auto reason = unsupported_by_framework(job.framework, p, job.model.moe.has_value())) {
    rejections.count(*reason, [&] {
      return "framework " + std::string(to_string(job.framework)) +
             " does not run such plans (planner/framework_support.h)";
    });
  } else {
    out.plans.push_back(p);
  }
}

// Every plan of one layout in the order micro-batch size, sequence parallelism, recompute,
// recompute modules, offloaded layers, all-to-all overlap, ZeRO stage, schedule, layer split; the
// valid ones go to out.plans, the others are counted by reason.
void enumerate_layout_plans(const Job& job, const Layout& layout, const PlanFixes& fixes,
                            const SpaceLimits& limits, Enumeration& out) {
  const std::vector<Recompute> recomputes =
      fixes.recompute
          ? std::vector<Recompute>{*fixes.recompute}
          : std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full};
  const std::vector<int> zeros =
      fixes.zero_stage ? std::vector<int>{*fixes.zero_stage} : std::vector<int>{0, 1, 2, 3};
  const std::vector<ScheduleKind> schedules = schedule_options(job, layout, fixes);
  const std::vector<bool> sps = sequence_parallel_options(layout, fixes);
  const std::vector<std::vector<int64_t>> splits = layer_split_options(job, layout);
  RejectionCounter rejections(out);
  ParallelPlan p;
  p.tp = layout.tp;
  p.cp = layout.cp;
  p.pp = layout.pp;
  p.dp = layout.dp;
  p.ep = layout.ep;
  p.vpp = layout.vpp;
  p.etp = layout.etp;
  for (int64_t mbs :
       fixed_or(fixes.micro_batch_size, micro_batch_sizes(job.training, layout.dp, limits))) {
    p.micro_batch_size = mbs;
    for (bool sp : sps) {
      p.sequence_parallel = sp;
      for (Recompute recompute : recomputes) {
        p.recompute = recompute;
        for (unsigned modules : recompute_module_options(job, recompute, limits)) {
          p.recompute_modules = modules;
          for (int64_t offload : offload_options(job, layout, recompute, limits)) {
            p.offload_activation_layers = offload;
            for (bool overlap : a2a_overlap_options(job, layout, recompute, fixes)) {
              p.moe_a2a_overlap = overlap;
              for (int zero : zeros) {
                // Without a data-parallel group every ZeRO stage is the same plan.
                if (layout.dp * layout.cp == 1 && zero != zeros.front() && !fixes.zero_stage)
                  continue;
                p.zero_stage = zero;
                for (ScheduleKind schedule : schedules) {
                  p.schedule = schedule;
                  for (const auto& split : splits) {
                    // DualPipe's ranks each hold a chunk from both ends of the model: the
                    // output layer already shares a rank with the embedding.
                    if (!split.empty() && schedule == ScheduleKind::DualPipe) continue;
                    p.layers_per_stage = split;
                    add_candidate(job, p, out, rejections);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

PlanFixes parse_fixes(const std::vector<std::string>& fixes) {
  PlanFixes out;
  std::map<std::string, std::string> given;  // key -> the --fix that gave it
  const std::vector<std::string> keys = {"tp",        "pp",
                                         "dp",        "cp",
                                         "ep",        "etp",
                                         "vpp",       "micro_batch_size",
                                         "mbs",       "sequence_parallel",
                                         "recompute", "zero_stage",
                                         "schedule",  "moe_a2a_overlap"};
  for (const auto& fix : fixes) {
    const auto eq = fix.find('=');
    if (eq == std::string::npos) {
      throw InputError("--fix", fix, "no '='", "KEY=VALUE, e.g. --fix tp=8");
    }
    const std::string key = fix.substr(0, eq);
    const std::string value = fix.substr(eq + 1);
    const std::string canonical = key == "mbs" ? "micro_batch_size" : key;
    if (const auto earlier = given.find(canonical); earlier != given.end()) {
      throw UsageError("--fix: " + canonical + ": found twice (\"" + earlier->second + "\" and \"" +
                       fix + "\"); allowed: each key once");
    }
    given.emplace(canonical, fix);
    if (key == "tp")
      out.tp = parse_positive(key, value);
    else if (key == "pp")
      out.pp = parse_positive(key, value);
    else if (key == "dp")
      out.dp = parse_positive(key, value);
    else if (key == "cp")
      out.cp = parse_positive(key, value);
    else if (key == "ep")
      out.ep = parse_positive(key, value);
    else if (key == "etp")
      out.etp = parse_positive(key, value);
    else if (key == "vpp")
      out.vpp = parse_positive(key, value, kMaxFixedVpp);
    else if (key == "micro_batch_size" || key == "mbs")
      out.micro_batch_size = parse_positive(key, value);
    else if (key == "sequence_parallel" || key == "moe_a2a_overlap") {
      if (value != "true" && value != "false") {
        throw InputError("--fix", key, "\"" + value + "\"", "true or false");
      }
      (key == "sequence_parallel" ? out.sequence_parallel : out.moe_a2a_overlap) = value == "true";
    } else if (key == "recompute") {
      if (value == "none")
        out.recompute = Recompute::None;
      else if (value == "selective")
        out.recompute = Recompute::Selective;
      else if (value == "full")
        out.recompute = Recompute::Full;
      else
        throw InputError("--fix", key, "\"" + value + "\"", "none, selective or full");
    } else if (key == "zero_stage") {
      const int64_t v = value == "0" ? 0 : parse_positive(key, value);
      if (v > 3) throw InputError("--fix", key, value, "0, 1, 2 or 3");
      out.zero_stage = static_cast<int>(v);
    } else if (key == "schedule") {
      if (value == "1f1b")
        out.schedule = ScheduleKind::OneFOneB;
      else if (value == "interleaved")
        out.schedule = ScheduleKind::Interleaved;
      else if (value == "gpipe")
        out.schedule = ScheduleKind::Gpipe;
      else if (value == "zero-bubble" || value == "zb-h1")
        out.schedule = ScheduleKind::ZeroBubble;
      else if (value == "dualpipe")
        out.schedule = ScheduleKind::DualPipe;
      else
        throw InputError("--fix", key, "\"" + value + "\"",
                         "1f1b, interleaved, gpipe, zero-bubble or dualpipe");
    } else {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      throw InputError("--fix", key, "an unknown plan key", list + nearest_key_hint(key, keys));
    }
  }
  return out;
}

void check_fixes_fit_cluster(const Job& job, const PlanFixes& fixes) {
  constexpr int64_t kProductCap = 1'000'000'000'000;
  const int64_t gpus = job.cluster.num_gpus;
  std::string names, values, first;
  int64_t product = 1;
  int pinned = 0;
  for (const auto& [name, fix] : {std::pair{"tp", fixes.tp}, std::pair{"cp", fixes.cp},
                                  std::pair{"pp", fixes.pp}, std::pair{"dp", fixes.dp}}) {
    if (!fix) continue;
    ++pinned;
    if (first.empty()) first = name;
    names += (names.empty() ? "" : "*") + std::string(name);
    values += (values.empty() ? "" : "*") + std::to_string(*fix);
    // Capped so that four pins up to 10^6 cannot overflow; beyond the cap it is no divisor.
    product = std::min(product * *fix, kProductCap);
  }
  if (pinned == 0) return;
  const std::string found =
      pinned == 1 ? values
                  : names + " = " + values + " = " +
                        (product >= kProductCap ? "more than 10^12" : std::to_string(product));
  const std::string cluster = std::to_string(gpus) + " GPUs (" +
                              std::to_string(job.cluster.num_nodes) + " x " +
                              job.cluster.node.name + ")";
  if (product > gpus || gpus % product != 0) {
    throw InputError("--fix", first, found,
                     (pinned == 1 ? "a divisor of" : "a product that divides") +
                         std::string(" the cluster's ") + cluster);
  }
  if (pinned == 4 && product != gpus) {
    throw InputError("--fix", first, found, "a product equal to the cluster's " + cluster);
  }
}

Enumeration enumerate_plans(const Job& job, const PlanFixes& fixes, const SpaceLimits& limits,
                            int threads) {
  Enumeration out;
  const std::vector<Layout> layouts = enumerate_layouts(job, fixes, limits, out);
  // Each layout's plans on its own, then merged in layout order: the same plans, counts and
  // first examples as one pass over the layouts, for any thread count.
  std::vector<Enumeration> parts(layouts.size());
  parallel_for(static_cast<int64_t>(layouts.size()), resolve_threads(threads), [&](int, int64_t i) {
    enumerate_layout_plans(job, layouts[static_cast<std::size_t>(i)], fixes, limits,
                           parts[static_cast<std::size_t>(i)]);
  });
  std::size_t total = out.plans.size();
  for (const Enumeration& part : parts) total += part.plans.size();
  out.plans.reserve(total);
  for (Enumeration& part : parts) {
    out.considered += part.considered;
    for (const auto& [reason, count] : part.rejected) out.rejected[reason] += count;
    for (auto& [reason, example] : part.examples) out.examples.emplace(reason, std::move(example));
    std::move(part.plans.begin(), part.plans.end(), std::back_inserter(out.plans));
    part = Enumeration{};
  }
  return out;
}

}  // namespace parplan::planner
