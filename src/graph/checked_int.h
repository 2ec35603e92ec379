// Overflow-checked int64 arithmetic for sizes computed from user input (extents, strides,
// problem sizes): a wrapped product is a wrong buffer size, so every such product goes
// through these and an overflow becomes an error value at the caller.
#pragma once

#include <cstdint>
#include <optional>

namespace fusedgemm::checked {

inline std::optional<std::int64_t> mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<std::int64_t> mul(std::optional<std::int64_t> a, std::int64_t b) {
  return a ? mul(*a, b) : std::nullopt;
}

inline std::optional<std::int64_t> add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b near INT64_MAX.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace fusedgemm::checked
