// TrainingSpec: what one optimizer step processes (docs/job_file.md#training).
#pragma once

#include <cstdint>
#include <string>

#include "core/cluster_spec.h"
#include "core/json_input.h"

namespace parplan {

enum class TrainingMethod { Pretrain, Sft, Lora };
const char* to_string(TrainingMethod method);

struct TrainingSpec {
  int64_t global_batch_size = 0;  // sequences per optimizer step
  int64_t seq_length = 0;
  Precision precision = Precision::Bf16;
  TrainingMethod method = TrainingMethod::Pretrain;
  int64_t lora_rank = 16;

  double tokens_per_step() const {
    return static_cast<double>(global_batch_size) * static_cast<double>(seq_length);
  }
};

TrainingSpec parse_training_spec(const Json& object, const std::string& file,
                                 const std::string& path);
Json training_spec_to_json(const TrainingSpec& training);

}  // namespace parplan
