// Counted nouns for messages: count_of(1, "micro-batch") == "1 micro-batch",
// count_of(8, "micro-batch") == "8 micro-batches", count_of(2, "GPU") == "2 GPUs". Tested in
// tests/core/plural_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace parplan {

// The noun in the plural: an "s" (an "es" after s, x, z, ch, sh), or `plural` when given.
inline std::string plural_of(std::string_view noun) {
  const auto ends = [&](std::string_view tail) { return noun.ends_with(tail); };
  if (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh")) {
    return std::string(noun) + "es";
  }
  return std::string(noun) + "s";
}

// "1 host", "2 hosts"; `plural` overrides the regular form ("1 entry", "3 entries").
inline std::string count_of(int64_t count, std::string_view noun, std::string_view plural = {}) {
  std::string out = std::to_string(count) + " ";
  if (count == 1) return out + std::string(noun);
  return out + (plural.empty() ? plural_of(noun) : std::string(plural));
}

}  // namespace parplan
