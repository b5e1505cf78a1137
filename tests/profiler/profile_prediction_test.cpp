// The profiler's purpose, tested: profile this machine with `mpirun -np 2 parplan profile
// --backend cpu --quick`, then predict GEMM shapes and all-reduce sizes that the fits did not
// see, with the fitted models the cost model uses (core/gemm_efficiency.h,
// core/hardware_profile.h), within 15 % (medians).
//
// The held-out shapes and sizes are measured in the same profiling run, interleaved with the
// others (the profiler alternates the samples of every shape, and of every size, of one sweep),
// and left out when the test refits the profile's measurements with the profiler's own fitting
// code. So the prediction and the measurement see the same machine: this shared VM changes
// speed, and the slope of its all-reduce curve, by factors of two between mpirun launches,
// which made a fresh measurement after the profile a test of the machine, not of the fit.
//
// A held-out point counts only when its measurement is clean (noise within 10 %, not only
// disturbed samples: cpu_timing.h) and the refit reproduces its own points within 10 % (GEMM:
// the fit's rms error; all-reduce: the measured sizes on either side of the held-out one, since
// Open MPI's protocol switches make the curve bend between sizes and a line that misses its
// neighbouring points cannot interpolate between them any better; nor can one when the two
// neighbours lie on different fitted lines, as the switch is somewhere between them: under
// ASan a held-out 192 KiB measured 133 us, on the 128 KiB side's line, while the 256 KiB
// side's line, which the geometric-mean convention picks there, gives 188). The verdict on
// a kind is the median error of its counted points, pooled over the profiles taken: profiles
// are retaken (three at most) until each kind has at least three counted points, since a median
// of two is their mean and one odd size decides it (in CI a clean 24 KiB measured 117 us, 25 %
// above the line through its 16 and 32 KiB neighbours, which that line fits within 2 %; the next
// profile measured it on its line, within 2 %). The test fails when a judged median misses, and
// is skipped, saying why, when a kind never reaches three counted points. Prints every number
// it compares.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/gemm_efficiency.h"
#include "core/hardware_profile.h"
#include "core/json_input.h"
#include "profiler/fit_collective.h"
#include "profiler/fit_gemm.h"
#include "profiler/gemm_shapes.h"
#include "profiler/profile_options.h"
#include "profiler/profile_writer.h"
#include "profiler/records.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

constexpr double kTolerance = 0.15;
constexpr double kNoiseTolerance = 0.10;
// A fit that misses its own points by more than this (GEMM: rms; all-reduce: at the measured
// neighbours) cannot be held to kTolerance at a new point: under ASan, Eigen's GEMM times fit
// the model with 12-14 % rms and a held-out shape then lands at -17 % or +15 %.
constexpr double kFitTolerance = 0.10;
// Several held-out points of each kind: this VM's MPI times deviate from a smooth curve by 10-15 %
// at single sizes (with sub-percent noise), so the verdict is on the median error.
const std::array<GemmShape, 3> kHeldOutGemms = {
    GemmShape{320, 640, 256, 1}, GemmShape{384, 192, 768, 1}, GemmShape{640, 384, 320, 1}};
// Halfway (1.5x) between measured powers of two, from 24 to 384 KiB: five, because a point
// whose measured neighbours fall in different fitted ranges cannot judge (below).
constexpr std::array<double, 5> kHeldOutAllReduceBytes = {24 * 1024, 48 * 1024, 96 * 1024,
                                                          192 * 1024, 384 * 1024};
constexpr int kMinCleanPoints = 3;
constexpr double kQuickMaxCollectiveBytes = 64.0 * 1024 * 1024;

std::string mpirun(int ranks) {
  return std::string(PARPLAN_MPIEXEC) + " -np " + std::to_string(ranks) +
         " --allow-run-as-root --oversubscribe"
         // Open MPI's PMIx thread keeps an allocation no suppression can name (ranks of two
         // or more processes only): leak checking off for the ranks.
         " -x ASAN_OPTIONS=detect_leaks=0 ";
}

std::string run(const std::string& command, int* exit_code) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

bool same_shape(const GemmShape& a, const GemmShape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch;
}

// The quick profile's GEMM shapes and collective sizes, with the held-out ones added.
std::string profile_command(const std::string& path) {
  std::string shapes;
  for (const GemmShape& h : kHeldOutGemms) shapes += profiler::to_string(h) + ",";
  for (const GemmShape& s : profiler::cpu_gemm_shapes(true)) {
    for (const GemmShape& h : kHeldOutGemms) {
      EXPECT_FALSE(same_shape(s, h)) << "a held-out GEMM is one of the quick profile's shapes";
    }
    shapes += profiler::to_string(s) + ",";
  }
  shapes.pop_back();
  std::string sizes;
  for (const double h : kHeldOutAllReduceBytes)
    sizes += std::to_string(static_cast<int64_t>(h)) + ",";
  for (const double s : profiler::doubling_sizes(8.0, kQuickMaxCollectiveBytes)) {
    for (const double h : kHeldOutAllReduceBytes) {
      EXPECT_NE(s, h) << "a held-out size is one of the quick sizes";
    }
    sizes += std::to_string(static_cast<int64_t>(s)) + ",";
  }
  sizes.pop_back();
  return mpirun(2) + PARPLAN_BINARY +
         " profile --backend cpu --quick --quiet --gemm-precisions fp32 --collective-ops "
         "all_reduce --gemm-shapes " +
         shapes + " --collective-sizes " + sizes + " --out " + path;
}

// One held-out point: its error, and whether it can judge the fit (clean measurement, a fit
// that reproduces its own points there).
struct Point {
  double error = 0;
  bool clean = false;
};

Point point(const std::string& what, double predicted, const Json& measured, double fit_error,
            const char* cannot_judge = nullptr) {
  const double measured_s = measured["median_s"].get<double>();
  const double noise = measured["noise"].get<double>();
  const bool disturbed = measured.value("disturbed_only", false);
  Point p;
  p.error = predicted / measured_s - 1;
  p.clean = fit_error <= kFitTolerance && noise <= kNoiseTolerance && !disturbed &&
            cannot_judge == nullptr;
  std::printf(
      "  %s: predicted %.4g s, measured %.4g s (noise %.1f %%): error %+.1f %%; fit "
      "error %.1f %%%s%s%s\n",
      what.c_str(), predicted, measured_s, 100 * noise, 100 * p.error, 100 * fit_error,
      disturbed ? ", disturbed samples only" : "", cannot_judge ? cannot_judge : "",
      p.clean ? "" : " -> not counted");
  return p;
}

// The counted points of one kind, pooled over the profiles taken, and the verdict on them:
// judged when at least kMinCleanPoints count, passed when their median |error| is within the
// tolerance.
struct Pool {
  std::vector<double> abs_errors;
  void add(const char* what, const std::vector<Point>& points) {
    std::size_t counted = 0;
    for (const Point& p : points) {
      if (!p.clean) continue;
      abs_errors.push_back(std::abs(p.error));
      ++counted;
    }
    std::printf("  %s: %zu of %zu held-out points counted, %zu over the profiles so far\n", what,
                counted, points.size(), abs_errors.size());
  }
  bool judged() const { return static_cast<int>(abs_errors.size()) >= kMinCleanPoints; }
  bool passed(const char* what) const {
    std::vector<double> e = abs_errors;
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    const double median = n % 2 == 1 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
    const bool pass = median <= kTolerance;
    std::printf("%s: median |error| %.1f %% over %zu counted held-out points -> %s\n", what,
                100 * median, n, pass ? "pass" : "FAIL");
    return pass;
  }
};

// The held-out GEMMs: the profiler's GEMM fit (fit_gemms, as the profile's node fit) over the
// other fp32 shapes.
std::vector<Point> check_gemm(const HardwareProfile& profile) {
  profiler::RawProfile others;
  std::array<const Json*, kHeldOutGemms.size()> held_out{};
  for (const auto& g : profile.measurements["gemm"]) {
    if (g["precision"] != "fp32") continue;
    const GemmShape shape{g["m"].get<int64_t>(), g["n"].get<int64_t>(), g["k"].get<int64_t>(),
                          g["batch"].get<int64_t>()};
    bool is_held_out = false;
    for (std::size_t i = 0; i < kHeldOutGemms.size(); ++i) {
      if (same_shape(shape, kHeldOutGemms[i])) {
        held_out[i] = &g;
        is_held_out = true;
      }
    }
    if (is_held_out) continue;
    profiler::GemmRecord r;
    r.shape = shape;
    r.precision = "fp32";
    r.time.median_s = g["median_s"].get<double>();
    r.time.disturbed_only = g.value("disturbed_only", false);
    others.gemm.push_back(r);
  }
  const profiler::GemmFits fit = profiler::fit_gemms(
      others, {"fp32"}, profile.node.gpu.hbm_bandwidth_gbps * profile.node.gpu.hbm_efficiency);
  std::printf(
      "GEMM refit over %d shapes (the held-out ones left out): rms error %.1f %%, max "
      "%.1f %%\n",
      fit.result.points, 100 * fit.result.rms_relative_error, 100 * fit.result.max_relative_error);
  std::vector<Point> points;
  for (std::size_t i = 0; i < kHeldOutGemms.size(); ++i) {
    EXPECT_NE(held_out[i], nullptr) << "the profile lacks a held-out GEMM";
    if (held_out[i] == nullptr) return {};
    const double predicted =
        profiler::gemm_model_time_s(fit.result.model, fit.input, {kHeldOutGemms[i], 0, 0});
    points.push_back(point("GEMM " + profiler::to_string(kHeldOutGemms[i]), predicted, *held_out[i],
                           fit.result.rms_relative_error));
  }
  return points;
}

// The held-out all-reduce sizes: the profiler's segmented fit over the other sizes.
std::vector<Point> check_all_reduce(const HardwareProfile& profile) {
  std::vector<profiler::CollectiveRecord> records;
  std::array<const Json*, kHeldOutAllReduceBytes.size()> held_out{};
  for (const auto& c : profile.measurements["collectives"]) {
    if (c["op"] != "all_reduce" || c["span"] != "intra_node" || c["group_size"] != 2) continue;
    const double size = c["size_bytes"].get<double>();
    const auto it = std::find(kHeldOutAllReduceBytes.begin(), kHeldOutAllReduceBytes.end(), size);
    if (it != kHeldOutAllReduceBytes.end()) {
      held_out[static_cast<std::size_t>(it - kHeldOutAllReduceBytes.begin())] = &c;
      continue;
    }
    profiler::CollectiveRecord r;
    r.op = Collective::AllReduce;
    r.group_size = 2;
    r.span = "intra_node";
    r.size_bytes = size;
    r.time.median_s = c["median_s"].get<double>();
    r.time.disturbed_only = c.value("disturbed_only", false);
    records.push_back(r);
  }
  NodeSpec node;
  node.collective_fits = profiler::fit_collectives(records);
  for (const auto& f : node.collective_fits) {
    std::printf("all_reduce refit [%.0f, %.0f) B: latency %.2f us, busbw %.3f GB/s, rms %.1f %%\n",
                f.min_size_bytes, f.max_size_bytes, f.latency_us, f.busbw_gbps,
                100 * f.rms_relative_error);
  }
  std::vector<Point> points;
  for (std::size_t i = 0; i < kHeldOutAllReduceBytes.size(); ++i) {
    const double size = kHeldOutAllReduceBytes[i];
    EXPECT_NE(held_out[i], nullptr) << "the profile lacks the held-out size " << size;
    if (held_out[i] == nullptr) return {};
    // The refit at the measured sizes on either side of the held-out one.
    const profiler::CollectiveRecord* below = nullptr;
    const profiler::CollectiveRecord* above = nullptr;
    for (const auto& r : records) {
      if (r.size_bytes < size && (below == nullptr || r.size_bytes > below->size_bytes)) below = &r;
      if (r.size_bytes > size && (above == nullptr || r.size_bytes < above->size_bytes)) above = &r;
    }
    EXPECT_TRUE(below != nullptr && above != nullptr) << "no measured sizes around " << size;
    if (below == nullptr || above == nullptr) return {};
    double neighbour_error = 0;
    for (const auto* r : {below, above}) {
      neighbour_error =
          std::max(neighbour_error, std::abs(profiler::relative_error(node.collective_fits, *r)));
    }
    // Neighbours on two fitted lines: the protocol switches somewhere between them, and
    // where is not in the profile (the ranges meet at the geometric mean by convention), so
    // neither line can be held to a size in between.
    auto fit_at = [&node](double bytes) {
      return find_collective_fit(node, Collective::AllReduce, "intra_node", 2, bytes);
    };
    const bool between_ranges = fit_at(below->size_bytes) != fit_at(above->size_bytes);
    const double predicted =
        *fitted_collective_time_s(node, Collective::AllReduce, "intra_node", 2, size);
    points.push_back(
        point("all_reduce " + std::to_string(static_cast<int64_t>(size / 1024)) + " KiB", predicted,
              *held_out[i], neighbour_error,
              between_ranges ? ", neighbours on two fitted ranges" : nullptr));
  }
  return points;
}

TEST(ProfilePrediction, HeldOutGemmsAndAllReduceSizesWithinFifteenPercent) {
  const fs::path dir =
      fs::temp_directory_path() / ("parplan_prediction_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Pool gemm, all_reduce;
  for (int attempt = 0; attempt < 3 && !(gemm.judged() && all_reduce.judged()); ++attempt) {
    const std::string path = (dir / ("quick" + std::to_string(attempt) + ".json")).string();
    const auto start = std::chrono::steady_clock::now();
    int code = -1;
    const std::string output = run(profile_command(path), &code);
    ASSERT_EQ(code, 0) << output;
    std::printf("%sprofile %d with 2 ranks: %.1f s wall\n", output.c_str(), attempt,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    const HardwareProfile profile = load_hardware_profile(path);
    if (!gemm.judged()) gemm.add("GEMM", check_gemm(profile));
    if (!all_reduce.judged()) all_reduce.add("all_reduce", check_all_reduce(profile));
  }
  fs::remove_all(dir);
  if (gemm.judged()) {
    EXPECT_TRUE(gemm.passed("GEMM"))
        << "the fitted GEMM model missed the held-out shapes by more than 15 % (median)";
  }
  if (all_reduce.judged()) {
    EXPECT_TRUE(all_reduce.passed("all_reduce"))
        << "the fitted all-reduce missed the held-out sizes by more than 15 % (median)";
  }
  if (!gemm.judged() || !all_reduce.judged()) {
    GTEST_SKIP() << "fewer than " << kMinCleanPoints << " counted held-out points for "
                 << (gemm.judged() ? "" : "GEMM ") << (all_reduce.judged() ? "" : "all-reduce ")
                 << "over three profiles (noisy measurements, or fits missing their own points "
                    "by more than 10 %)";
  }
}

}  // namespace
}  // namespace parplan
