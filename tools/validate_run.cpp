#include "tools/validate_run.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/hardware_profile.h"
#include "core/plural.h"
#include "core/units.h"
#include "cost_models/step_model.h"
#include "tools/calibration_option.h"

namespace parplan::tools {

namespace {

// A GPT small enough for a CPU step of a fraction of a second, wide enough that its GEMMs
// dominate: 4 layers, width 128, 8 heads over 4 key/value groups, SwiGLU 512.
Json validation_model() {
  return {{"name", "validate-run-gpt"}, {"num_layers", 4},
          {"hidden_size", 128},         {"num_attention_heads", 8},
          {"num_query_groups", 4},      {"ffn_hidden_size", 512},
          {"vocab_size", 1024},         {"activation", "swiglu"},
          {"normalization", "rmsnorm"}, {"position_embedding", "rotary"},
          {"tied_embeddings", false}};
}

Job make_job(int ranks, const Json& plan) {
  const Json job = {
      {"framework", "parplan"},
      {"model", validation_model()},
      {"cluster", {{"node", "dgx-h100"}, {"num_gpus", ranks}}},
      {"training", {{"global_batch_size", 8}, {"seq_length", 128}, {"precision", "fp32"}}},
      {"plan", plan}};
  return parse_job(job, "<validate --run>", "");
}

std::string self_path() {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  PARPLAN_CHECK(n > 0, "cannot find the parplan binary (/proc/self/exe)");
  return std::string(buffer.data(), static_cast<std::size_t>(n));
}

std::string run_command(const std::string& command, int* exit_code) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  PARPLAN_CHECK(pipe != nullptr, "cannot start: ", command);
  std::string out;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe.get()) != nullptr) out += chunk.data();
  const int status = ::pclose(pipe.release());
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// Time-shared cores: with more ranks than cores every rank computes at cores/ranks speed.
ClusterSpec time_shared(ClusterSpec cluster, double share) {
  GpuSpec& g = cluster.node.gpu;
  for (auto& tflops : g.dense_tflops) tflops *= share;
  for (auto& [kind, gbps] : g.kernel_gbps) gbps *= share;
  g.attention_forward_tflops *= share;
  g.attention_backward_tflops *= share;
  g.hbm_bandwidth_gbps *= share;
  for (auto& fit : cluster.node.collective_fits) fit.busbw_gbps *= share;
  return cluster;
}

// `mpirun -np 2 parplan profile --backend cpu --quick` into STEM_profile.json (two ranks, so
// the profile holds this machine's MPI collectives too); returns the file's path.
std::string measure_profile(const RunValidationOptions& options, const std::string& binary,
                            const std::string& stem) {
  const std::string out = stem + "_profile.json";
  const std::string command = options.mpirun + " --allow-run-as-root --oversubscribe -np 2 " +
                              binary + " profile --backend cpu --quick --out " + out + " >" + stem +
                              "_profile.log 2>&1";
  int exit_code = 0;
  run_command(command, &exit_code);
  if (exit_code != 0) {
    std::string log;
    try {
      log = read_text_file(stem + "_profile.log");
    } catch (const Error&) {
    }
    throw Error("validate --run --reprofile: `" + command + "` failed (exit " +
                std::to_string(exit_code) + "): " + log.substr(0, 2000));
  }
  return out;
}

}  // namespace

std::vector<RunValidationEntry> run_validation_plans(int max_ranks, bool oversubscribed,
                                                     bool quick) {
  struct Spec {
    const char* label;
    int ranks;
    Json plan;
  };
  std::vector<Spec> specs = {
      {"1 rank, mbs 1", 1, {{"micro_batch_size", 1}}},
      {"1 rank, mbs 2", 1, {{"micro_batch_size", 2}}},
      {"1 rank, mbs 4", 1, {{"micro_batch_size", 4}}},
      {"dp2, mbs 2", 2, {{"dp", 2}, {"micro_batch_size", 2}}},
      {"dp2 zero-1, mbs 4", 2, {{"dp", 2}, {"micro_batch_size", 4}, {"zero_stage", 1}}},
      {"tp2, mbs 2", 2, {{"tp", 2}, {"dp", 1}, {"micro_batch_size", 2}}},
      {"tp2 sp, mbs 4",
       2,
       {{"tp", 2}, {"dp", 1}, {"micro_batch_size", 4}, {"sequence_parallel", true}}},
      {"pp2 1f1b, mbs 1", 2, {{"pp", 2}, {"dp", 1}, {"micro_batch_size", 1}}},
      {"pp2 gpipe, mbs 2",
       2,
       {{"pp", 2}, {"dp", 1}, {"micro_batch_size", 2}, {"schedule", "gpipe"}}},
  };
  if (quick) {
    specs = {specs[1], specs[3], specs[7]};
    oversubscribed = false;
  }
  if (oversubscribed) {
    specs.push_back({"dp2 tp2, mbs 2", 4, {{"tp", 2}, {"dp", 2}, {"micro_batch_size", 2}}});
    specs.push_back(
        {"tp2 pp2, mbs 1", 4, {{"tp", 2}, {"pp", 2}, {"dp", 1}, {"micro_batch_size", 1}}});
    specs.push_back(
        {"dp2 tp2 pp2, mbs 1", 8, {{"tp", 2}, {"pp", 2}, {"dp", 2}, {"micro_batch_size", 1}}});
  }
  std::vector<RunValidationEntry> out;
  for (const auto& spec : specs) {
    const bool over = spec.ranks > max_ranks;
    if (over && !oversubscribed) continue;
    RunValidationEntry e;
    e.label = spec.label;
    e.ranks = spec.ranks;
    e.oversubscribed = over;
    e.job = make_job(spec.ranks, spec.plan);
    out.push_back(std::move(e));
  }
  return out;
}

void run_and_predict(std::vector<RunValidationEntry>& entries, const RunValidationOptions& options,
                     const std::function<void(const std::string&)>& progress) {
  const auto load_cpu_profile = [](const std::string& path) {
    HardwareProfile profile = load_hardware_profile(path);
    PARPLAN_CHECK(profile.node.gpu.vendor == "cpu", path,
                  ": validate --run predicts the CPU executor; this profile is of a ",
                  profile.node.gpu.vendor, " device (run `parplan profile --backend cpu`)");
    return profile;
  };
  PARPLAN_CHECK(options.reprofile || !options.profile.empty(),
                "validate --run needs a profile (--profile PROFILE.json or --reprofile)");
  HardwareProfile profile;
  if (!options.profile.empty()) profile = load_cpu_profile(options.profile);
  const int cores = options.max_ranks > 0
                        ? options.max_ranks
                        : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  const std::string binary = self_path();
  const std::filesystem::path folder = std::filesystem::temp_directory_path() /
                                       ("parplan-validate-run-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  for (auto& e : entries) {
    const std::string stem = (folder / ("job_" + std::to_string(&e - entries.data()))).string();
    if (options.reprofile) {
      if (progress) progress("profiling this machine before " + e.label);
      profile = load_cpu_profile(measure_profile(options, binary, stem));
      e.profiled_before_run = true;
    }
    // Predict with the profile, time-shared when the ranks outnumber the cores.
    Job job = e.job;
    job.cluster = apply_profile(job.cluster, profile);
    if (e.ranks > cores)
      job.cluster = time_shared(job.cluster, static_cast<double>(cores) / e.ranks);
    e.predicted_job = job;  // uncalibrated: what `parplan calibrate` fits to
    apply_calibration(job, options.calibration);
    const cost::StepEstimate estimate = cost::estimate_step(job);
    e.predicted_step_time_s = estimate.step_time_s;
    e.predicted_memory_gib = estimate.memory.peak_bytes / kGiB;

    // Run it.
    const std::string job_file = stem + ".json";
    write_file_atomically(job_file, job_to_json(e.job).dump(2) + "\n");
    const std::string command =
        options.mpirun + " --allow-run-as-root --oversubscribe -np " + std::to_string(e.ranks) +
        " " + binary + " run --job " + job_file + " --backend cpu --dtype fp32 --json --steps " +
        std::to_string(options.steps) + " --comm-timeout " +
        std::to_string(static_cast<int>(options.comm_timeout_s)) + " 2>" + job_file + ".err";
    if (progress) progress("running " + e.label + " on " + count_of(e.ranks, "rank"));
    int exit_code = 0;
    const std::string output = run_command(command, &exit_code);
    const auto brace = output.find('{');
    if (exit_code != 0 || brace == std::string::npos) {
      std::string err;
      try {
        err = read_text_file(job_file + ".err");
      } catch (const Error&) {
      }
      throw Error("validate --run: `" + command + "` failed (exit " + std::to_string(exit_code) +
                  "): " + err.substr(0, 2000));
    }
    e.measured = parse_json(output.substr(brace), "parplan run --json output");
    e.measured_step_time_s = e.measured.at("step_time_s").get<double>();
    e.measured_memory_gib = e.measured.at("peak_memory_gib").get<double>();
  }
  std::error_code ignore;
  std::filesystem::remove_all(folder, ignore);
}

}  // namespace parplan::tools
