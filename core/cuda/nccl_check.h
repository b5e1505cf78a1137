// Check of NCCL calls for the profiler's and the executor's NCCL sources: a failed call throws
// parplan::Error through core/backend_check.h with NCCL's error string.
#pragma once

#include <nccl.h>

#include "core/backend_check.h"

#define PARPLAN_NCCL_CHECK(call)                                                               \
  do {                                                                                         \
    const ncclResult_t parplan_rc_ = (call);                                                   \
    if (parplan_rc_ != ncclSuccess) {                                                          \
      ::parplan::throw_backend_error("NCCL", ncclGetErrorString(parplan_rc_), #call, __FILE__, \
                                     __LINE__);                                                \
    }                                                                                          \
  } while (0)
