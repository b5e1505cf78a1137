// `parplan profile --backend cpu|cuda [--quick] --out PROFILE.json`: measures this machine
// (GEMMs, memory bandwidth, memory-bound kernels, collectives over the ranks given) and
// writes a profile whose "node" can replace a node preset (profiler/README.md). Runs with
// one rank without mpirun, or under `mpirun -np N`; calls MPI_Init/Finalize itself through
// the profiler's process group. Rank 0 writes the file atomically and prints a summary.
// Tested in tests/profiler/profile_cli_test.cpp and profile_prediction_test.cpp.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/plural.h"
#include "core/units.h"
#include "profiler/backend.h"
#include "profiler/cpu_timing.h"
#include "profiler/gemm_shapes.h"
#include "profiler/host_info.h"
#include "profiler/profile_writer.h"
#include "profiler/warning_summary.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/executor_probes.h"
#include "tools/text_table.h"

namespace parplan::tools {

namespace {

struct ProfileCliOptions {
  std::string backend;
  std::string out;
  bool quick = false;
  bool quiet = false;
  std::string gemm_shapes;
  std::string gemm_precisions;
  std::string collective_ops;
  std::string collective_sizes;
  double max_noise = 0;
  double budget_s = 0;
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

// "8,4K,64M,1G" -> bytes (binary suffixes).
std::vector<double> parse_sizes(const std::string& text) {
  std::vector<double> out;
  for (const auto& item : split_list(text)) {
    double multiplier = 1.0;
    std::string digits = item;
    if (!digits.empty()) {
      const char unit = digits.back();
      if (unit == 'K' || unit == 'k') multiplier = kKiB;
      if (unit == 'M' || unit == 'm') multiplier = kMiB;
      if (unit == 'G' || unit == 'g') multiplier = kGiB;
      if (multiplier != 1.0) digits.pop_back();
    }
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || value <= 0) {
      throw InputError("", "--collective-sizes", "\"" + item + "\"",
                       "positive byte counts with an optional K, M or G suffix, e.g. 8,64K,16M");
    }
    out.push_back(static_cast<double>(value) * multiplier);
  }
  return out;
}

profiler::ProfileOptions to_profile_options(const ProfileCliOptions& cli) {
  profiler::ProfileOptions options = profiler::default_profile_options(cli.quick);
  options.backend = cli.backend;
  if (!cli.gemm_shapes.empty()) {
    options.gemm_shapes = profiler::parse_gemm_shapes(cli.gemm_shapes, "--gemm-shapes");
  }
  if (!cli.gemm_precisions.empty()) {
    for (const auto& p : split_list(cli.gemm_precisions)) {
      if (p != "fp64" && p != "fp32" && p != "fp16" && p != "bf16" && p != "fp8") {
        throw InputError("", "--gemm-precisions", "\"" + p + "\"", "fp64, fp32, fp16, bf16, fp8");
      }
      options.gemm_precisions.push_back(p);
    }
  }
  if (!cli.collective_ops.empty()) {
    for (const auto& name : split_list(cli.collective_ops)) {
      const auto op = parse_collective(name);
      if (!op) {
        throw InputError("", "--collective-ops", "\"" + name + "\"",
                         "all_reduce, all_gather, reduce_scatter, all_to_all, send_recv");
      }
      options.collective_ops.push_back(*op);
    }
  }
  if (!cli.collective_sizes.empty()) options.collective_sizes = parse_sizes(cli.collective_sizes);
  if (cli.max_noise > 0) options.stopping.max_noise = cli.max_noise;
  if (cli.budget_s > 0) options.stopping.budget_s = cli.budget_s;
  options.progress = [quiet = cli.quiet](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "profile: %s\n", line.c_str());
  };
  return options;
}

void print_summary(const Json& doc, const std::string& out) {
  const Json& coverage = doc["coverage"];
  const Json& node = doc["node"];
  const Json& fits = doc["fits"];
  std::printf("Profile of %s (%s, backend %s): %s on %s%s, %.1f s -> %s\n",
              doc["host"]["hostname"].get<std::string>().c_str(),
              doc["device"]["name"].get<std::string>().c_str(),
              doc["device"]["backend"].get<std::string>().c_str(),
              count_of(coverage["ranks"].get<int>(), "rank").c_str(),
              count_of(coverage["hosts"].get<int>(), "host").c_str(),
              coverage["quick"].get<bool>() ? ", quick" : "", coverage["elapsed_s"].get<double>(),
              out.c_str());

  // GEMMs: range of achieved throughput per precision and the fitted model.
  TextTable gemm({"GEMM", "shapes", "min TFLOP/s", "median", "max", "fit asymptote", "m/n/k_half",
                  "launch us", "fit rms"});
  std::map<std::string, std::vector<double>> tflops;
  for (const auto& g : doc["measurements"]["gemm"]) {
    tflops[g["precision"].get<std::string>()].push_back(g["tflops"].get<double>());
  }
  for (auto& [precision, values] : tflops) {
    std::sort(values.begin(), values.end());
    const Json* fit = nullptr;
    double asymptote = 0;
    if (fits["gemm"].contains(precision)) {
      fit = &fits["gemm"][precision];
      asymptote = (*fit)["throughput_tflops"][precision].get<double>();
    } else if (fits["gemm"]["node"]["throughput_tflops"].contains(precision)) {
      fit = &fits["gemm"]["node"];
      asymptote = (*fit)["throughput_tflops"][precision].get<double>();
    }
    gemm.add_row({precision, std::to_string(values.size()), fixed(values.front(), 4),
                  fixed(values[values.size() / 2], 4), fixed(values.back(), 4),
                  fit ? fixed(asymptote, 4) : "-",
                  fit ? fixed((*fit)["gemm_m_half"].get<double>(), 1) + "/" +
                            fixed((*fit)["gemm_n_half"].get<double>(), 1) + "/" +
                            fixed((*fit)["gemm_k_half"].get<double>(), 1)
                      : "-",
                  fit ? fixed((*fit)["kernel_launch_us"].get<double>(), 2) : "-",
                  fit ? percent((*fit)["rms_relative_error"].get<double>()) : "-"});
  }
  std::fputs(gemm.render({1, 2, 3, 4, 5, 7, 8}).c_str(), stdout);

  // Kernels timed by their FLOPs (attention) move no counted bytes: their rate is GFLOP/s.
  TextTable memory({"memory-bound", "rows x cols", "GB/s", "noise"});
  for (const auto& m : doc["measurements"]["memory_bound"]) {
    const bool by_flops = m["bytes"].get<double>() <= 0 && m.contains("tflops");
    memory.add_row({m["kernel"].get<std::string>(),
                    std::to_string(m["rows"].get<int64_t>()) + " x " +
                        std::to_string(m["cols"].get<int64_t>()),
                    by_flops ? fixed(m["tflops"].get<double>() * 1e3, 2) + " GFLOP/s"
                             : fixed(m["gbps"].get<double>(), 2),
                    percent(m["noise"].get<double>())});
  }
  std::fputs(memory.render({2, 3}).c_str(), stdout);

  if (!doc["measurements"]["collectives"].empty()) {
    // Per (op, group, span): busbw at the largest size, the best busbw and the smallest time.
    struct Row {
      double largest = 0, busbw_at_largest = 0, best_busbw = 0, smallest_s = 1e30;
      int sizes = 0;
    };
    std::map<std::tuple<std::string, int64_t, std::string>, Row> rows;
    for (const auto& c : doc["measurements"]["collectives"]) {
      Row& row = rows[{c["op"].get<std::string>(), c["group_size"].get<int64_t>(),
                       c["span"].get<std::string>()}];
      const double size = c["size_bytes"].get<double>();
      const double busbw = c["busbw_gbps"].get<double>();
      ++row.sizes;
      row.best_busbw = std::max(row.best_busbw, busbw);
      row.smallest_s = std::min(row.smallest_s, c["median_s"].get<double>());
      if (size >= row.largest) {
        row.largest = size;
        row.busbw_at_largest = busbw;
      }
    }
    std::map<std::tuple<std::string, int64_t, std::string>, std::pair<int, double>> fit_info;
    for (const auto& f : node["collective_fits"]) {
      auto& info = fit_info[{f["op"].get<std::string>(), f["group_size"].get<int64_t>(),
                             f["span"].get<std::string>()}];
      ++info.first;
      info.second = std::max(info.second, f.value("rms_relative_error", 0.0));
    }
    TextTable table({"collective", "group", "span", "sizes", "largest", "busbw GB/s", "best busbw",
                     "min time", "fit ranges", "worst fit rms"});
    for (const auto& [key, row] : rows) {
      const auto& [op, group, span] = key;
      const auto info = fit_info[key];
      table.add_row({op, std::to_string(group), span, std::to_string(row.sizes),
                     fixed(row.largest / kMiB, 0) + " MiB", fixed(row.busbw_at_largest, 2),
                     fixed(row.best_busbw, 2), human_seconds(row.smallest_s),
                     std::to_string(info.first), percent(info.second)});
    }
    std::fputs(table.render({1, 3, 4, 5, 6, 7, 8, 9}).c_str(), stdout);
  }
  const Json& gpu = node["gpu"];
  std::printf(
      "Node figures: memory %.2f GB/s x %.2f, intra-node link %.2f GB/s, latency %s\n",
      gpu["hbm_bandwidth_gbps"]["value"].get<double>(),
      gpu["hbm_efficiency"]["value"].get<double>(),
      node["intra_node"]["link_bandwidth_gbps"]["value"].get<double>(),
      node["intra_node"].contains("latency_us")
          ? (fixed(node["intra_node"]["latency_us"]["value"].get<double>(), 2) + " us").c_str()
          : "not measured");
  const auto warnings = doc["warnings"].get<std::vector<std::string>>();
  if (!warnings.empty()) {
    std::printf("%s, each listed under \"warnings\" in the profile:\n",
                count_of(static_cast<int64_t>(warnings.size()), "warning").c_str());
    for (const auto& line : profiler::summarize_warnings(warnings)) {
      std::printf("  %s\n", line.c_str());
    }
  }
}

// The profile is written after minutes of measuring: its folder is checked first.
void check_output_folder(const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path target(out);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw InputError("", "--out", "\"" + out + "\" (its folder does not exist)",
                     "a file path in an existing, writable folder");
  }
  if (fs::is_directory(target, ec)) {
    throw InputError("", "--out", "\"" + out + "\" (a directory)", "a file path");
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    throw InputError("", "--out", "\"" + out + "\" (its folder is not writable)",
                     "a file path in an existing, writable folder");
  }
}

void run_profile(const ProfileCliOptions& cli, const std::string& command_line) {
  // Everything that can be checked before measuring is checked first, identically on every
  // rank, so that a bad option fails at once and on all ranks together.
  profiler::ProfileOptions options = to_profile_options(cli);
  // The executor's own CPU kernels, so that `validate --run` predicts it with what it runs.
  if (cli.backend == "cpu" && options.measure_memory)
    options.kernel_probes = executor_cpu_probes(cli.quick);
  // On a GPU, its CUDA kernels and fp32 GEMMs, made once the backend has chosen the GPU.
  if (cli.backend == "cuda" && options.measure_memory && options.measure_gemm) {
    const bool quick = cli.quick;
    options.device_kernel_probes = [quick](int node_local_rank) {
      return executor_cuda_probes(quick, node_local_rank);
    };
  }
  check_output_folder(cli.out);
  auto backend = profiler::make_backend(cli.backend);
  auto group = profiler::start_process_group();
  try {
    profiler::CpuTimer timer;
    timer.start();
    if (group->is_root()) {
      options.progress("backend " + cli.backend + ", " + count_of(group->size(), "rank") + " on " +
                       count_of(group->num_hosts(), "host") + (cli.quick ? ", quick" : ""));
    }
    const profiler::RawProfile raw = backend->run(*group, options);
    // Rank 0 fits and writes; the others learn whether that worked before they finish.
    std::string failure;
    Json doc;
    if (group->is_root()) {
      try {
        profiler::ProfileContext context{profiler::utc_timestamp(), command_line,
                                         timer.elapsed_s()};
        doc = profiler::build_profile(raw, options, context);
        write_file_atomically(cli.out, doc.dump(1) + "\n");
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
    const double failed = group->max_over_ranks(failure.empty() ? 0.0 : 1.0);
    if (!failure.empty()) throw Error(failure);
    if (failed > 0) throw Error("rank 0 could not write the profile");
    if (group->is_root()) print_summary(doc, cli.out);
  } catch (const std::exception& e) {
    if (group->size() > 1) {
      std::fprintf(stderr, "error (rank %d of %d): %s\n", group->rank(), group->size(), e.what());
      std::fflush(stderr);
      group->abort(1);
    }
    throw;
  }
}

}  // namespace

void register_profile(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "profile",
      "Measure this machine (GEMMs, memory, collectives over the MPI ranks) and write a profile "
      "whose node can replace a node preset. Run under mpirun -np N for collectives.");
  auto cli = std::make_shared<ProfileCliOptions>();
  cmd->add_option("--backend", cli->backend, "cpu (Eigen + MPI) or cuda (cuBLASLt + NCCL + CUPTI)")
      ->required()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--out", cli->out, "Profile file to write (JSON, written atomically)")
      ->required();
  cmd->add_flag("--quick", cli->quick,
                "Fewer shapes and sizes, 3 % noise or 0.25 s per measurement");
  cmd->add_flag("--quiet", cli->quiet, "No progress lines on stderr");
  cmd->add_option("--gemm-shapes", cli->gemm_shapes,
                  "GEMM shapes MxNxK[xBATCH],... instead of the transformer-layer list");
  cmd->add_option("--gemm-precisions", cli->gemm_precisions,
                  "GEMM precisions, e.g. fp32,fp64 (cpu) or bf16,fp8 (cuda)");
  cmd->add_option("--collective-ops", cli->collective_ops,
                  "Collectives to time: all_reduce,all_gather,reduce_scatter,all_to_all,send_recv");
  cmd->add_option("--collective-sizes", cli->collective_sizes,
                  "Collective sizes (nccl-tests S) instead of 8 B doubling to 64 MiB / 1 GiB, "
                  "e.g. 8,64K,16M");
  cmd->add_option("--max-noise", cli->max_noise, "Relative noise that ends a measurement")
      ->check(CLI::Range(1e-4, 1.0));
  cmd->add_option("--budget-s", cli->budget_s, "Time budget of one measurement, seconds")
      ->check(CLI::Range(1e-3, 3600.0));
  cmd->callback([cli, cmd] {
    std::string command_line = "parplan profile";
    for (const auto* option : cmd->get_options()) {
      if (option->count() == 0 || option->get_name() == "--help") continue;
      command_line += " " + option->get_name();
      if (option->get_type_size() == 0) continue;  // a flag
      for (const auto& value : option->results()) command_line += " " + value;
    }
    run_profile(*cli, command_line);
  });
}

}  // namespace parplan::tools
