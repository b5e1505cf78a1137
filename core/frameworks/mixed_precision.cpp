#include "core/frameworks/mixed_precision.h"

namespace parplan {

void megatron_mixed_precision(FrameworkTraits& t, Precision precision) {
  if (precision == Precision::Fp16) {
    t.weight_bytes = 2;
    t.grad_bytes = 2;
    t.optimizer_bytes = 16;
    t.grad_reduce_bytes = 2;
  } else if (precision == Precision::Fp32) {
    t.weight_bytes = 4;
    t.grad_bytes = 4;
    t.optimizer_bytes = 8;
    t.grad_reduce_bytes = 4;
  } else {
    t.weight_bytes = 2;
    t.grad_bytes = 4;
    t.optimizer_bytes = 12;
    t.grad_reduce_bytes = 4;
  }
}

void fsdp_mixed_precision(FrameworkTraits& t) {
  t.weight_bytes = 4;
  t.grad_bytes = 4;
  t.optimizer_bytes = 8;
  t.grad_reduce_bytes = 4;
  // The fused step updates the fp32 parameters in place: no 16-bit copy to write.
  t.optimizer_step_bytes_per_param = kFusedAdamStepBytesPerParam - 2;
}

}  // namespace parplan
