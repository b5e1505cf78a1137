// `parplan validate --run --profile PROFILE.json`: runs a set of plans with the executor on
// the machine at hand (`mpirun -np N parplan run --json` per plan), predicts each with the
// cost model and the profile of the same machine (framework "parplan"), and compares step
// time and peak memory. With reprofile, each plan's profile is measured right before its run,
// interleaving measurements and runs so that a shared machine's load moves both together. Plans use
// at most as many ranks as cores; an oversubscribed set (more ranks than cores) is reported
// separately and predicted as time-shared cores. Tested in tests/tools/validate_run_test.cpp (label
// mpi).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/calibration.h"
#include "core/job.h"
#include "core/json_input.h"

namespace parplan::tools {

struct RunValidationOptions {
  std::string profile;  // a CPU profile of this machine (required unless reprofile)
  // Measure the profile again right before each plan (`mpirun -np 2 parplan profile --backend
  // cpu --quick`) and predict that plan with it: the profile and the run it predicts then see
  // the same load on a shared machine (a profile taken minutes earlier saw another).
  bool reprofile = false;
  int max_ranks = 0;           // 0: the cores of this machine (at least 2)
  bool oversubscribed = true;  // also run 4- and 8-rank plans on fewer cores
  int steps = 4;
  bool quick = false;  // three plans (1 rank, dp2, pp2): a smoke run for tests
  double comm_timeout_s = 120;
  std::string mpirun = "mpirun";
  std::optional<CalibrationFile> calibration;  // applied to every prediction (--calibration)
};

struct RunValidationEntry {
  std::string label;
  Job job;
  Job predicted_job;  // the job as predicted: the profile's node (time-shared), uncalibrated
  int ranks = 1;
  bool oversubscribed = false;
  double predicted_step_time_s = 0;
  double measured_step_time_s = 0;
  double predicted_memory_gib = 0;
  double measured_memory_gib = 0;
  Json measured;                     // parplan run --json output
  bool profiled_before_run = false;  // predicted with a profile measured right before the run
};

// The jobs of the plan set: a small GPT under dp, tp (+sp), pp and micro-batch variants.
std::vector<RunValidationEntry> run_validation_plans(int max_ranks, bool oversubscribed,
                                                     bool quick = false);

// Runs and predicts every entry (in place). Throws parplan::Error when a run fails.
void run_and_predict(std::vector<RunValidationEntry>& entries, const RunValidationOptions& options,
                     const std::function<void(const std::string&)>& progress);

}  // namespace parplan::tools
