#include "tools/plan_sweep.h"

#include <charconv>
#include <chrono>
#include <cstdio>

#include "core/check.h"
#include "tools/calibration_text.h"
#include "tools/estimate_json.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

// The largest cluster a job may name (core/job.cpp).
constexpr int64_t kMaxGpus = 100'000'000;
const char* const kGpusAllowed =
    "A:B (doubling from A to B), A:B:STEP or a list N,M,... of GPU counts, e.g. 1024:16384 or "
    "512,1024,2048";

int64_t parse_count(const std::string& text, const std::string& whole) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 1 || value > kMaxGpus) {
    throw InputError("--gpus", "", "\"" + whole + "\" (\"" + text + "\" is not a GPU count)",
                     std::string(kGpusAllowed) + "; counts in [1, 100000000]");
  }
  return value;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

std::vector<int64_t> range_sizes(const std::string& text) {
  const auto parts = split(text, ':');
  if (parts.size() > 3) {
    throw InputError("--gpus", "", "\"" + text + "\" (more than two ':')", kGpusAllowed);
  }
  const int64_t first = parse_count(parts[0], text);
  const int64_t last = parse_count(parts[1], text);
  if (last < first) {
    throw InputError("--gpus", "", "\"" + text + "\" (the end is below the start)",
                     std::string(kGpusAllowed) + "; A <= B");
  }
  std::vector<int64_t> sizes;
  const int64_t step = parts.size() == 3 ? parse_count(parts[2], text) : 0;
  for (int64_t n = first; n <= last; n = step > 0 ? n + step : n * 2) {
    sizes.push_back(n);
    if (static_cast<int>(sizes.size()) > kMaxSweepSizes) break;
  }
  return sizes;
}

}  // namespace

std::vector<int64_t> parse_gpu_sizes(const std::string& text, int64_t gpus_per_node) {
  std::vector<int64_t> sizes;
  if (text.find(':') != std::string::npos) {
    sizes = range_sizes(text);
  } else {
    for (const auto& part : split(text, ',')) sizes.push_back(parse_count(part, text));
  }
  if (static_cast<int>(sizes.size()) > kMaxSweepSizes) {
    throw InputError("--gpus", "", "\"" + text + "\" (more than 256 sizes)",
                     std::string(kGpusAllowed) + "; at most 256 sizes");
  }
  for (const int64_t n : sizes) {
    if (n % gpus_per_node != 0) {
      throw InputError(
          "--gpus", "", std::to_string(n) + " GPUs in \"" + text + "\"",
          "whole nodes: multiples of the node's " + std::to_string(gpus_per_node) + " GPUs");
    }
  }
  return sizes;
}

std::optional<std::size_t> cheapest_within_deadline(const std::vector<SweepRow>& rows,
                                                    double deadline_days) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& run = rows[i].run;
    if (!run || !run->progresses || run->time_to_train_days > deadline_days) continue;
    if (!best || run->gpu_hours < rows[*best].run->gpu_hours) best = i;
  }
  return best;
}

std::optional<std::size_t> knee_index(const std::vector<SweepRow>& rows) {
  auto time_of = [](const SweepRow& row) -> std::optional<double> {
    if (!row.best) return std::nullopt;
    if (row.run) {
      if (!row.run->progresses) return std::nullopt;
      return row.run->time_to_train_days;
    }
    return row.best->estimate.step_time_s;
  };
  std::optional<std::size_t> previous;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto t = time_of(rows[i]);
    if (!t) continue;
    if (previous && rows[i].num_gpus > rows[*previous].num_gpus) {
      const double t_prev = *time_of(rows[*previous]);
      const double growth =
          static_cast<double>(rows[i].num_gpus) / static_cast<double>(rows[*previous].num_gpus) -
          1.0;
      if ((t_prev / *t - 1.0) / growth < kKneeMarginalEfficiency) return previous;
    }
    previous = i;
  }
  return std::nullopt;
}

SweepResult sweep_cluster_sizes(const Job& job, const std::vector<int64_t>& gpu_sizes,
                                const planner::SearchOptions& search,
                                std::optional<double> deadline_days) {
  if (deadline_days && !job.training.run.total_tokens) {
    throw InputError(job.file, "training.total_tokens", "nothing (the key is missing)",
                     "the tokens to train, which --deadline-days needs");
  }
  const auto start = std::chrono::steady_clock::now();
  SweepResult sweep;
  planner::SearchOptions options = search;
  options.top_k = 1;
  options.pareto = false;
  for (const int64_t gpus : gpu_sizes) {
    Job sized = job;
    const int64_t nodes = gpus / job.cluster.node.gpus_per_node;
    sized.cluster = make_cluster(job.cluster.node, nodes, gpus);
    SweepRow row;
    row.num_gpus = gpus;
    row.num_nodes = nodes;
    const planner::SearchResult found = planner::search_plans(sized, options);
    row.search_time_s = found.search_time_s;
    if (!found.top.empty()) {
      row.best = found.top.front();
      sized.plan = row.best->plan;
      row.run = cost::estimate_time_to_train(sized, row.best->estimate);
    }
    sweep.rows.push_back(std::move(row));
  }
  if (deadline_days) sweep.chosen = cheapest_within_deadline(sweep.rows, *deadline_days);
  sweep.sweep_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sweep;
}

Json sweep_to_json(const Job& job, const SweepResult& sweep, std::optional<double> deadline_days) {
  Json rows = Json::array();
  for (const auto& row : sweep.rows) {
    Json entry = {{"num_gpus", row.num_gpus}, {"num_nodes", row.num_nodes}};
    if (row.best) {
      Job sized = job;
      sized.cluster = make_cluster(job.cluster.node, row.num_nodes, row.num_gpus);
      sized.plan = row.best->plan;
      Json estimate = estimate_to_json(sized, row.best->estimate);
      estimate.erase("memory");
      entry.update(estimate);
    } else {
      entry["plan"] = nullptr;
    }
    entry["search_time_s"] = row.search_time_s;
    rows.push_back(entry);
  }
  const auto knee = knee_index(sweep.rows);
  Json out = {{"sweep", rows},
              {"sweep_time_s", sweep.sweep_time_s},
              {"knee_gpus", knee ? Json(sweep.rows[*knee].num_gpus) : Json(nullptr)}};
  if (deadline_days) {
    out["deadline_days"] = *deadline_days;
    out["chosen"] = sweep.chosen ? Json(sweep.rows[*sweep.chosen].num_gpus) : Json(nullptr);
  }
  if (!job.calibration.is_identity()) {  // predicted with `--calibration` (core/calibration.h)
    out["calibration"] = {{"factors", calibration_factors_json(job.calibration)}};
  }
  return out;
}

std::string sweep_to_text(const Job& job, const SweepResult& sweep,
                          std::optional<double> deadline_days) {
  const bool run = job.training.run.total_tokens.has_value();
  const bool priced = job.training.run.gpu_hour_usd.has_value();
  std::vector<std::string> head = {"GPUs", "nodes", "best plan", "tokens/s", "MFU"};
  if (run) head.insert(head.end(), {"goodput", "days", "GPU-hours"});
  if (priced) head.push_back("cost $");
  TextTable table(head);
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    const auto& row = sweep.rows[i];
    std::vector<std::string> cells = {std::to_string(row.num_gpus), std::to_string(row.num_nodes)};
    if (!row.best) {
      cells.push_back("no plan fits");
      cells.resize(head.size(), "-");
      table.add_row(cells);
      continue;
    }
    const auto& e = row.best->estimate;
    cells.insert(cells.end(),
                 {plan_cell(row.best->plan), fixed(e.tokens_per_s, 0), percent(e.mfu)});
    if (run) {
      const auto& t = *row.run;
      cells.push_back(percent(t.goodput));
      cells.push_back(t.progresses ? fixed(t.time_to_train_days, 1) : "never");
      cells.push_back(t.progresses ? fixed(t.gpu_hours, 0) : "-");
      if (priced) cells.push_back(t.progresses && t.cost_usd ? fixed(*t.cost_usd, 0) : "-");
    }
    if (sweep.chosen && *sweep.chosen == i) cells[0] += " *";
    table.add_row(cells);
  }
  std::vector<std::size_t> right = {0, 1, 3, 4};
  for (std::size_t c = 5; c < head.size(); ++c) right.push_back(c);
  std::string out = table.render(right);
  char line[256];
  if (const auto knee = knee_index(sweep.rows)) {
    std::snprintf(line, sizeof line,
                  "\nknee: %lld GPUs; the next size buys less than half its ideal speed-up\n",
                  static_cast<long long>(sweep.rows[*knee].num_gpus));
    out += line;
  }
  if (deadline_days) {
    if (sweep.chosen) {
      const auto& row = sweep.rows[*sweep.chosen];
      std::snprintf(line, sizeof line,
                    "\n* cheapest size within %.1f days: %lld GPUs (%.1f days, %.0f GPU-hours)\n",
                    *deadline_days, static_cast<long long>(row.num_gpus),
                    row.run->time_to_train_days, row.run->gpu_hours);
    } else {
      std::snprintf(line, sizeof line,
                    "\nno size in the sweep trains within %.1f days; try larger clusters\n",
                    *deadline_days);
    }
    out += line;
  }
  std::snprintf(line, sizeof line, "\nsweep: %zu sizes in %.3f s\n", sweep.rows.size(),
                sweep.sweep_time_s);
  out += line;
  return out;
}

}  // namespace parplan::tools
