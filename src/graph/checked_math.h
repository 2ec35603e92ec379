// Products and sums of extents, strides and sizes, all of which come from callers: every one
// that could wrap is computed here, saturating at INT64_MAX so that a limit compared against
// the result refuses it instead of seeing a wrapped small number.
#pragma once

#include <cstdint>
#include <limits>

namespace fusedgemm {

inline constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

inline constexpr std::int64_t kSaturatedNegative = std::numeric_limits<std::int64_t>::min();

// a * b, saturated when it does not fit.
constexpr std::int64_t saturating_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) != (b < 0) ? kSaturatedNegative : kSaturated;
}

// a + b, saturated when it does not fit.
constexpr std::int64_t saturating_add(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return a < 0 ? kSaturatedNegative : kSaturated;
}

// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace fusedgemm
