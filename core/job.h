// Job: one training job as the job file describes it (docs/job_file.md): framework,
// model, cluster, training and plan, loaded strictly with every default that page states.
// Relative model/node paths resolve against the job file's folder. Tested in
// tests/core/job_test.cpp and the bad-input corpus (tests/bad_inputs/).
#pragma once

#include <string>
#include <vector>

#include "core/calibration.h"
#include "core/cluster_spec.h"
#include "core/framework.h"
#include "core/json_input.h"
#include "core/model_spec.h"
#include "core/parallel_plan.h"
#include "core/training_spec.h"

namespace parplan {

struct Job {
  std::string file;  // the job file's path ("<inline>" for objects built in code)
  Framework framework = Framework::MegatronCore;
  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
  ParallelPlan plan;
  bool plan_given = false;
  // Factors fitted to measured runs (`parplan calibrate`); identity unless the command was
  // given --calibration. Its node fractions are already applied to cluster.node
  // (calibrated_job); the MoE throughput and the additive factors act from here.
  Calibration calibration;
  // Things the job allows but that are probably not meant, one line each without the
  // "warning: " prefix ("job.json: training.seq_length: 16384 is longer than ..."); the
  // commands print them on stderr (tools/cli_common.h print_job_warnings).
  std::vector<std::string> warnings;
};

enum class PlanCheck { Enforce, Skip, EnforceIfGiven };

// Loads and checks a job file. With PlanCheck::Skip the plan's relations to the model and
// cluster are not enforced (the `plan` command ignores the job's plan); EnforceIfGiven
// enforces them only when the file has a plan (`compare` compares it, or only searches).
Job load_job(const std::string& path, PlanCheck plan_check = PlanCheck::Enforce);
Job parse_job(const Json& object, const std::string& file, const std::string& base_dir,
              PlanCheck plan_check = PlanCheck::Enforce);

// Resolves a model given as preset name, file path (our JSON or a Hugging Face config.json)
// or inline object.
ModelSpec resolve_model(const Json& value, const std::string& file, const std::string& key_path,
                        const std::string& base_dir);
NodeSpec resolve_node(const Json& value, const std::string& file, const std::string& key_path,
                      const std::string& base_dir);
ClusterSpec make_cluster(const NodeSpec& node, int64_t num_nodes, int64_t num_gpus);

// Throws the InputError for a plan violation, naming `file`.
[[noreturn]] void throw_plan_violation(const PlanViolation& violation, const std::string& file);

Json job_to_json(const Job& job);

// The job with `calibration` applied: its node's efficiency figures scaled (core/calibration.h
// calibrated_node) and the MoE throughput and additive factors carried for the layer, step and
// memory models. The job must not be calibrated already.
Job calibrated_job(const Job& job, const Calibration& calibration);

}  // namespace parplan
