// Check of CUPTI calls: a failed call throws parplan::Error through core/backend_check.h with
// CUPTI's result string.
#pragma once

#include <cupti.h>

#include "core/backend_check.h"

#define PARPLAN_CUPTI_CHECK(call)                                                         \
  do {                                                                                    \
    const CUptiResult parplan_rc_ = (call);                                               \
    if (parplan_rc_ != CUPTI_SUCCESS) {                                                   \
      const char* parplan_text_ = nullptr;                                                \
      cuptiGetResultString(parplan_rc_, &parplan_text_);                                  \
      ::parplan::throw_backend_error("CUPTI", parplan_text_ ? parplan_text_ : "?", #call, \
                                     __FILE__, __LINE__);                                 \
    }                                                                                     \
  } while (0)
