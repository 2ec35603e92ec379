// Products and sums of extents, strides and sizes, all of which come from callers: every one
// that could wrap is computed here. Two forms: saturating at INT64_MAX, for a limit compared
// against the result (it refuses instead of seeing a wrapped small number), and `checked::`,
// an empty optional on overflow, for a size the caller must turn into an error value.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

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

namespace checked {

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

// A double as fp32 (a graph attribute): empty past fp32's range, where the conversion is
// undefined behaviour; inf and NaN are themselves, and a value between the largest fp32 and
// where doubles stop rounding to it is that largest value.
inline std::optional<float> fp32(double value) {
  if (value != value || value == std::numeric_limits<double>::infinity() ||
      value == -std::numeric_limits<double>::infinity()) {
    return static_cast<float>(value);
  }
  constexpr double kRoundsToFinite = 0x1.ffffffp127;
  if (!(value < kRoundsToFinite && value > -kRoundsToFinite)) return std::nullopt;
  const double max = std::numeric_limits<float>::max();
  return static_cast<float>(value > max ? max : value < -max ? -max : value);
}

}  // namespace checked

}  // namespace fusedgemm
