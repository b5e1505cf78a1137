// Overflow-checked products of the 64-bit sizes users write (tp * pp * cp * dp, nodes * GPUs
// per node, ...): where user numbers meet, a product is formed with these and never with a
// bare `*`. Tested in tests/core/checked_int_test.cpp.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>

namespace parplan {

// a * b, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of non-negative factors, or INT64_MAX when it does not fit: comparisons against
// a bound stay correct ("more than any cluster") without undefined behaviour.
inline int64_t saturating_product(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors) {
    const auto next = checked_mul(out, f);
    if (!next) return std::numeric_limits<int64_t>::max();
    out = *next;
  }
  return out;
}

}  // namespace parplan
