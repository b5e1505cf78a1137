#include "core/training_spec.h"

namespace parplan {

const char* to_string(TrainingMethod method) {
  switch (method) {
    case TrainingMethod::Sft:
      return "sft";
    case TrainingMethod::Lora:
      return "lora";
    case TrainingMethod::Pretrain:
      break;
  }
  return "pretrain";
}

TrainingSpec parse_training_spec(const Json& object, const std::string& file,
                                 const std::string& path) {
  JsonReader in(object, file, path);
  TrainingSpec t;
  t.global_batch_size = in.require_int("global_batch_size", 1, 1'000'000'000);
  t.seq_length = in.require_int("seq_length", 1, 100'000'000);
  t.precision =
      *parse_precision(in.choice_or("precision", "bf16", {"fp32", "fp16", "bf16", "fp8"}));
  const std::string method = in.choice_or("method", "pretrain", {"pretrain", "sft", "lora"});
  t.method = method == "sft"    ? TrainingMethod::Sft
             : method == "lora" ? TrainingMethod::Lora
                                : TrainingMethod::Pretrain;
  t.lora_rank = in.int_or("lora_rank", 16, 1, 1'000'000);
  in.finish();
  return t;
}

Json training_spec_to_json(const TrainingSpec& t) {
  Json out = {{"global_batch_size", t.global_batch_size},
              {"seq_length", t.seq_length},
              {"precision", to_string(t.precision)},
              {"method", to_string(t.method)}};
  if (t.method == TrainingMethod::Lora) out["lora_rank"] = t.lora_rank;
  return out;
}

}  // namespace parplan
