// Element types and reduction operators shared by the Comm and Compute interfaces.
// Tested through every communicator test (tests/executor/).
#pragma once

#include <cstddef>
#include <cstdint>

namespace parplan::executor {

enum class DType { F32, F64, I32, I64, U8 };
enum class ReduceOp { Sum, Max };

inline std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::U8:
      return 1;
  }
  return 1;
}

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::F32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::F64;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::I32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::I64;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::U8;
}

}  // namespace parplan::executor
