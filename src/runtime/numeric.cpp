#include "runtime/numeric.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace fusedgemm::numeric {
namespace {

// Which codes of a small float format are not finite numbers.
enum class Specials : std::uint8_t {
  kIeee,        // all-ones exponent: mantissa 0 is inf, anything else NaN (fp16, bf16, e5m2)
  kAllOnesNan,  // only S.1111.111 is NaN, no inf (OCP e4m3)
  kNone,        // every code is finite (e2m1)
};

struct MiniFloat {
  int exp_bits;
  int man_bits;
  int bias;
  Specials specials;
  // `.satfinite`: overflow and inf give +-max finite instead of inf.
  bool saturate;
  // What NaN encodes to (sign included): the canonical NaN `cvt` writes, or +max for e2m1.
  std::uint32_t nan_code;

  constexpr std::uint32_t exp_mask() const { return (1u << exp_bits) - 1; }
  constexpr std::uint32_t man_mask() const { return (1u << man_bits) - 1; }
  constexpr std::uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  constexpr std::uint32_t inf_code() const { return exp_mask() << man_bits; }
  // Codes grow with magnitude, so this bounds every finite magnitude code.
  constexpr std::uint32_t max_code() const {
    switch (specials) {
      case Specials::kIeee: return ((exp_mask() - 1) << man_bits) | man_mask();
      case Specials::kAllOnesNan: return (exp_mask() << man_bits) | (man_mask() - 1);
      case Specials::kNone: return (exp_mask() << man_bits) | man_mask();
    }
    return 0;
  }
};

constexpr MiniFloat kFp32Format{8, 23, 127, Specials::kIeee, false, 0x7FFFFFFFu};
constexpr MiniFloat kFp16Format{5, 10, 15, Specials::kIeee, false, 0x7FFFu};
constexpr MiniFloat kBf16Format{8, 7, 127, Specials::kIeee, false, 0x7FFFu};
constexpr MiniFloat kE4M3Format{4, 3, 7, Specials::kAllOnesNan, true, 0x7Fu};
constexpr MiniFloat kE5M2Format{5, 2, 15, Specials::kIeee, true, 0x7Fu};
constexpr MiniFloat kE2M1Format{2, 1, 1, Specials::kNone, true, 0x7u};

constexpr std::uint32_t kE8M0Nan = 0xFF;
constexpr int kE8M0Bias = 127;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

const MiniFloat* format_of(DataType type) noexcept {
  switch (type) {
    case DataType::kFloat32: return &kFp32Format;
    case DataType::kFloat16: return &kFp16Format;
    case DataType::kBFloat16: return &kBf16Format;
    case DataType::kFp8E4M3: return &kE4M3Format;
    case DataType::kFp8E5M2: return &kE5M2Format;
    case DataType::kFp4E2M1: return &kE2M1Format;
    default: return nullptr;
  }
}

// Rounds a non-negative value to the nearest integer, ties to even, without depending on
// the floating-point environment's rounding mode.
double round_half_even(double q) noexcept {
  const double floor_q = std::floor(q);
  const double rest = q - floor_q;  // exact: q < 2^53 or already integral
  if (rest > 0.5) return floor_q + 1;
  if (rest < 0.5) return floor_q;
  return std::fmod(floor_q, 2.0) == 0.0 ? floor_q : floor_q + 1;
}

double decode_mini(const MiniFloat& f, std::uint32_t code) noexcept {
  const std::uint32_t exp_field = (code >> f.man_bits) & f.exp_mask();
  const std::uint32_t man = code & f.man_mask();
  const bool negative = (code & f.sign_bit()) != 0;
  double magnitude = 0;
  if (f.specials == Specials::kIeee && exp_field == f.exp_mask()) {
    magnitude = man == 0 ? std::numeric_limits<double>::infinity() : kNan;
  } else if (f.specials == Specials::kAllOnesNan && exp_field == f.exp_mask() &&
             man == f.man_mask()) {
    magnitude = kNan;
  } else if (exp_field == 0) {
    magnitude = std::ldexp(static_cast<double>(man), 1 - f.bias - f.man_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(man + (1u << f.man_bits)),
                           static_cast<int>(exp_field) - f.bias - f.man_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Round to nearest even on the exact value. Subnormals share the quantum of the smallest
// normal binade, so clamping the exponent there makes one formula serve both.
std::uint32_t encode_mini(const MiniFloat& f, double value) noexcept {
  if (std::isnan(value)) return f.nan_code;
  const std::uint32_t sign = std::signbit(value) ? f.sign_bit() : 0;
  const double magnitude = std::fabs(value);
  const std::uint32_t overflow = f.saturate ? f.max_code() : f.inf_code();
  if (std::isinf(magnitude)) return sign | overflow;
  if (magnitude == 0) return sign;
  const int min_exp = 1 - f.bias;
  const int exp = std::max(std::ilogb(magnitude), min_exp);
  // In [0, 2^(man_bits + 1)); the scaling is exact because it is by a power of two.
  const double rounded = round_half_even(std::ldexp(magnitude, f.man_bits - exp));
  // ((exp field - 1) << man_bits) + significand: covers subnormals (significand below
  // 2^man_bits at exp field 1 is exp field 0), and a carry out of the mantissa becomes the
  // next exponent on its own.
  const std::uint64_t code = (static_cast<std::uint64_t>(exp - min_exp) << f.man_bits) +
                             static_cast<std::uint64_t>(rounded);
  if (code > f.max_code()) return sign | overflow;
  return sign | static_cast<std::uint32_t>(code);
}

double decode_e8m0(std::uint32_t code) noexcept {
  code &= 0xFF;
  if (code == kE8M0Nan) return kNan;
  return std::ldexp(1.0, static_cast<int>(code) - kE8M0Bias);
}

std::uint32_t encode_e8m0(double value) noexcept {
  if (std::isnan(value) || value < 0) return kE8M0Nan;
  constexpr std::uint32_t kMaxCode = kE8M0Nan - 1;
  if (std::isinf(value)) return kMaxCode;
  if (value == 0) return 0;
  int exp = std::ilogb(value);
  // Linear distance: above 1.5 * 2^e the upper power is nearer. With no mantissa bit
  // there is no even neighbour for the midpoint; it goes up, so a scale rounded there
  // keeps x / scale inside the quantized type's range.
  if (std::ldexp(value, -exp) >= 1.5) ++exp;
  const int code = exp + kE8M0Bias;
  if (code < 0) return 0;
  if (code > static_cast<int>(kMaxCode)) return kMaxCode;
  return static_cast<std::uint32_t>(code);
}

// `cvt.rni.sat`: nearest, ties to even, clamped to [lo, hi]; NaN gives 0.
std::int64_t to_integer(double value, std::int64_t lo, std::int64_t hi) noexcept {
  if (std::isnan(value)) return 0;
  if (value <= static_cast<double>(lo)) return lo;
  if (value >= static_cast<double>(hi)) return hi;
  const double magnitude = round_half_even(std::fabs(value));
  const auto result = static_cast<std::int64_t>(magnitude);
  return value < 0 ? -result : result;
}

int storage_bytes(DataType type) noexcept {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kInt32: return 4;
    case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
    case DataType::kE8M0:
    case DataType::kInt8: return 1;
    case DataType::kFp4E2M1:  // a nibble; load_code and store_code handle it
    case DataType::kNotSet: return 0;
  }
  return 0;
}

std::uint32_t load_code(DataType type, const void* base, std::int64_t element_index) noexcept {
  const auto* bytes = static_cast<const std::uint8_t*>(base);
  if (type == DataType::kFp4E2M1) {
    const std::uint8_t byte = bytes[element_index / 2];
    return (element_index % 2 == 0) ? (byte & 0x0Fu) : (byte >> 4);
  }
  const int width = storage_bytes(type);
  const std::uint8_t* at = bytes + element_index * width;
  std::uint32_t code = 0;
  // Little-endian by construction, whatever the host's byte order.
  for (int i = 0; i < width; ++i) code |= static_cast<std::uint32_t>(at[i]) << (8 * i);
  return code;
}

void store_code(DataType type, void* base, std::int64_t element_index,
                std::uint32_t code) noexcept {
  auto* bytes = static_cast<std::uint8_t*>(base);
  if (type == DataType::kFp4E2M1) {
    std::uint8_t& byte = bytes[element_index / 2];
    const auto nibble = static_cast<std::uint8_t>(code & 0x0Fu);
    byte = (element_index % 2 == 0) ? static_cast<std::uint8_t>((byte & 0xF0u) | nibble)
                                    : static_cast<std::uint8_t>((byte & 0x0Fu) | (nibble << 4));
    return;
  }
  const int width = storage_bytes(type);
  std::uint8_t* at = bytes + element_index * width;
  for (int i = 0; i < width; ++i) at[i] = static_cast<std::uint8_t>(code >> (8 * i));
}

}  // namespace

std::uint32_t encode(DataType type, double value) noexcept {
  if (const MiniFloat* f = format_of(type)) return encode_mini(*f, value);
  switch (type) {
    case DataType::kE8M0: return encode_e8m0(value);
    case DataType::kInt8: return static_cast<std::uint32_t>(to_integer(value, -128, 127)) & 0xFFu;
    case DataType::kInt32:
      return static_cast<std::uint32_t>(to_integer(value, std::numeric_limits<std::int32_t>::min(),
                                                   std::numeric_limits<std::int32_t>::max()));
    default: return 0;
  }
}

double decode_double(DataType type, std::uint32_t code) noexcept {
  switch (type) {
    case DataType::kFloat32: return std::bit_cast<float>(code);
    case DataType::kE8M0: return decode_e8m0(code);
    case DataType::kInt8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(code));
    case DataType::kInt32: return static_cast<std::int32_t>(code);
    case DataType::kNotSet: return kNan;
    default: break;
  }
  const MiniFloat* f = format_of(type);
  if (f == nullptr) return kNan;
  return decode_mini(*f, code & ((f->sign_bit() << 1) - 1));
}

// Every type but int32 holds only floats, so the narrowing is exact for them.
float decode(DataType type, std::uint32_t code) noexcept {
  return static_cast<float>(decode_double(type, code));
}

float load(DataType type, const void* base, std::int64_t element_index) noexcept {
  return decode(type, load_code(type, base, element_index));
}

double load_double(DataType type, const void* base, std::int64_t element_index) noexcept {
  return decode_double(type, load_code(type, base, element_index));
}

void store(DataType type, void* base, std::int64_t element_index, float value) noexcept {
  store_double(type, base, element_index, value);
}

void store_double(DataType type, void* base, std::int64_t element_index, double value) noexcept {
  if (type == DataType::kNotSet) return;
  store_code(type, base, element_index, encode(type, value));
}

float round_to(DataType type, float value) noexcept {
  if (type == DataType::kNotSet) return value;
  return decode(type, encode(type, value));
}

double round_to_double(DataType type, double value) noexcept {
  if (type == DataType::kNotSet) return value;
  return decode_double(type, encode(type, value));
}

double max_finite(DataType type) noexcept {
  if (const MiniFloat* f = format_of(type)) return decode_mini(*f, f->max_code());
  switch (type) {
    case DataType::kE8M0: return decode_e8m0(kE8M0Nan - 1);
    case DataType::kInt8: return 127;
    case DataType::kInt32: return std::numeric_limits<std::int32_t>::max();
    default: return 0;
  }
}

}  // namespace fusedgemm::numeric
