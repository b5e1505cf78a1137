// Shared by the libFuzzer targets: the fuzzer's bytes as text, and the one rule every target
// checks: parplan::Error (an input error with a message) is the only way out; anything else
// (another exception, a crash, a sanitizer report, a hang) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/check.h"

namespace parplan::fuzz {

inline std::string_view as_text(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `body`; an Error must carry a message, other exceptions escape to libFuzzer (which
// reports them as a crash with the input).
template <typename Body>
void expect_clean(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    PARPLAN_ASSERT(e.what()[0] != '\0');
  }
}

}  // namespace parplan::fuzz
