#include "planner/plan_space.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "planner/framework_support.h"

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

// Layers per chunk are balanced enough: ceil(L / chunks) <= limit * L / chunks.
bool split_balanced(int64_t layers, int64_t chunks, double limit) {
  if (chunks > layers) return false;
  const double mean = static_cast<double>(layers) / static_cast<double>(chunks);
  const double largest = std::ceil(mean);
  return largest <= limit * mean + 1e-9;
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
  const std::vector<std::string> keys = {"tp",
                                         "pp",
                                         "dp",
                                         "cp",
                                         "ep",
                                         "vpp",
                                         "micro_batch_size",
                                         "mbs",
                                         "sequence_parallel",
                                         "recompute",
                                         "zero_stage",
                                         "schedule"};
  for (const auto& fix : fixes) {
    const auto eq = fix.find('=');
    if (eq == std::string::npos) {
      throw InputError("--fix", fix, "no '='", "KEY=VALUE, e.g. --fix tp=8");
    }
    const std::string key = fix.substr(0, eq);
    const std::string value = fix.substr(eq + 1);
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
    else if (key == "vpp")
      out.vpp = parse_positive(key, value, kMaxFixedVpp);
    else if (key == "micro_batch_size" || key == "mbs")
      out.micro_batch_size = parse_positive(key, value);
    else if (key == "sequence_parallel") {
      if (value != "true" && value != "false") {
        throw InputError("--fix", key, "\"" + value + "\"", "true or false");
      }
      out.sequence_parallel = value == "true";
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
      else
        throw InputError("--fix", key, "\"" + value + "\"",
                         "1f1b, interleaved, gpipe or zero-bubble");
    } else {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      throw InputError("--fix", key, "an unknown plan key", list + nearest_key_hint(key, keys));
    }
  }
  return out;
}

Enumeration enumerate_plans(const Job& job, const PlanFixes& fixes, const SpaceLimits& limits) {
  const ModelSpec& model = job.model;
  const ClusterSpec& cluster = job.cluster;
  const TrainingSpec& training = job.training;
  const int64_t gpus = cluster.num_gpus;
  const int64_t gpn = cluster.node.gpus_per_node;
  Enumeration out;

  std::vector<int64_t> tps;
  for (int64_t tp : divisors(gpus)) {
    if (tp <= std::max<int64_t>(1, limits.max_tp_nodes * gpn) && tp <= model.num_attention_heads) {
      tps.push_back(tp);
    }
  }
  std::vector<int64_t> cps;
  for (int64_t cp : divisors(gpus)) {
    if (cp <= limits.max_cp && training.seq_length / cp >= limits.min_tokens_per_cp_rank)
      cps.push_back(cp);
  }
  if (cps.empty()) cps.push_back(1);
  std::vector<int64_t> eps = {1};
  if (model.moe) eps = divisors(model.moe->num_experts);

  const std::vector<Recompute> recomputes =
      fixes.recompute
          ? std::vector<Recompute>{*fixes.recompute}
          : std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full};
  const std::vector<int> zeros =
      fixes.zero_stage ? std::vector<int>{*fixes.zero_stage} : std::vector<int>{0, 1, 2, 3};

  auto reject = [&](const std::string& reason) { ++out.rejected[reason]; };

  for (int64_t tp : fixed_or(fixes.tp, tps)) {
    for (int64_t cp : fixed_or(fixes.cp, cps)) {
      if (gpus % (tp * cp) != 0) {
        ++out.considered;
        reject("gpu-count");
        continue;
      }
      std::vector<int64_t> pps;
      for (int64_t pp : divisors(gpus / (tp * cp))) {
        if (pp <= model.num_layers) pps.push_back(pp);
      }
      for (int64_t pp : fixed_or(fixes.pp, pps)) {
        if (gpus % (tp * cp * pp) != 0) {
          ++out.considered;
          reject("gpu-count");
          continue;
        }
        const int64_t dp = gpus / (tp * cp * pp);
        if (fixes.dp && *fixes.dp != dp) continue;  // outside the pinned part of the space
        if (!split_balanced(model.num_layers, pp, limits.max_chunk_imbalance)) {
          ++out.considered;
          reject("uneven-split-limit");
          continue;
        }
        std::vector<int64_t> vpps = {1};
        if (pp > 1) {
          for (int64_t v = 2; v <= limits.max_vpp; ++v) vpps.push_back(v);
        }
        std::vector<int64_t> mbss;
        const int64_t local =
            training.global_batch_size % dp == 0 ? training.global_batch_size / dp : 0;
        for (int64_t mbs : divisors(std::max<int64_t>(1, local))) {
          if (mbs <= limits.max_micro_batch_size) mbss.push_back(mbs);
        }
        if (local == 0) mbss = {1};
        for (int64_t ep : fixed_or(fixes.ep, eps)) {
          for (int64_t vpp : fixed_or(fixes.vpp, vpps)) {
            if (vpp > 1 &&
                !split_balanced(model.num_layers, pp * vpp, limits.max_chunk_imbalance)) {
              ++out.considered;
              reject("uneven-split-limit");
              continue;
            }
            std::vector<ScheduleKind> schedules;
            if (fixes.schedule) {
              schedules = {*fixes.schedule};
            } else if (vpp > 1) {
              schedules = {ScheduleKind::Interleaved};
            } else if (pp > 1) {
              schedules = {ScheduleKind::OneFOneB, ScheduleKind::ZeroBubble};
            } else {
              schedules = {ScheduleKind::OneFOneB};
            }
            std::vector<bool> sps = {false};
            if (tp > 1) sps = {false, true};
            if (fixes.sequence_parallel) sps = {*fixes.sequence_parallel};
            for (int64_t mbs : fixed_or(fixes.micro_batch_size, mbss)) {
              for (bool sp : sps) {
                for (Recompute recompute : recomputes) {
                  for (int zero : zeros) {
                    // Without a data-parallel group every ZeRO stage is the same plan.
                    if (dp * cp == 1 && zero != zeros.front() && !fixes.zero_stage) continue;
                    for (ScheduleKind schedule : schedules) {
                      ++out.considered;
                      ParallelPlan p;
                      p.tp = tp;
                      p.cp = cp;
                      p.pp = pp;
                      p.dp = dp;
                      p.ep = ep;
                      p.vpp = vpp;
                      p.micro_batch_size = mbs;
                      p.sequence_parallel = sp;
                      p.recompute = recompute;
                      p.zero_stage = zero;
                      p.schedule = schedule;
                      if (auto violation = check_plan(model, cluster, training, p)) {
                        reject(violation->reason);
                        continue;
                      }
                      if (auto reason = unsupported_by_framework(job.framework, p)) {
                        reject(*reason);
                        continue;
                      }
                      out.plans.push_back(p);
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
  return out;
}

}  // namespace parplan::planner
