#include "runtime/numeric.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace fusedgemm;
using numeric::decode_double;
using numeric::encode;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

struct CodeSpace {
  DataType type;
  int bits;
};

constexpr std::array<CodeSpace, 7> kSmallTypes = {{
    {DataType::kFloat16, 16},
    {DataType::kBFloat16, 16},
    {DataType::kFp8E4M3, 8},
    {DataType::kFp8E5M2, 8},
    {DataType::kFp4E2M1, 4},
    {DataType::kE8M0, 8},
    {DataType::kInt8, 8},
}};

// The float formats whose positive codes grow with magnitude from 0 up to max finite.
constexpr std::array<DataType, 5> kFloatTypes = {DataType::kFloat16, DataType::kBFloat16,
                                                 DataType::kFp8E4M3, DataType::kFp8E5M2,
                                                 DataType::kFp4E2M1};

int bits_of_float_type(DataType t) {
  for (const auto& s : kSmallTypes) {
    if (s.type == t) return s.bits;
  }
  return 0;
}

}  // namespace

TEST(Numeric, EveryCodeRoundTrips) {
  for (const auto& [type, bits] : kSmallTypes) {
    const std::uint32_t count = 1u << bits;
    for (std::uint32_t code = 0; code < count; ++code) {
      const double value = decode_double(type, code);
      if (std::isnan(value)) {
        // NaN payloads are not kept, but NaN stays NaN.
        EXPECT_TRUE(std::isnan(decode_double(type, encode(type, value))))
            << to_string(type) << " code " << code;
        continue;
      }
      // e5m2 encodes with .satfinite, so its inf codes come back as +-max finite.
      const bool saturates = type == DataType::kFp8E5M2 && std::isinf(value);
      const std::uint32_t want = saturates ? code - 1 : code;
      EXPECT_EQ(encode(type, value), want) << to_string(type) << " value " << value;
      EXPECT_EQ(encode(type, static_cast<float>(value)), want) << to_string(type);
      EXPECT_EQ(numeric::decode(type, code), static_cast<float>(value)) << to_string(type);
    }
  }
}

TEST(Numeric, Fp32RoundTripsSampledCodes) {
  for (std::uint64_t code = 0; code < (1ull << 32); code += 65521) {
    const auto c = static_cast<std::uint32_t>(code);
    const float value = std::bit_cast<float>(c);
    if (std::isnan(value)) continue;
    EXPECT_EQ(encode(DataType::kFloat32, value), c);
    EXPECT_EQ(numeric::round_to(DataType::kFloat32, value), value);
  }
}

// Between every two neighbouring positive codes: the midpoint goes to the even code, and
// the doubles just either side of it go to the nearer code.
TEST(Numeric, EveryMidpointRoundsToEven) {
  for (DataType type : kFloatTypes) {
    const std::uint32_t max_code = encode(type, numeric::max_finite(type));
    for (std::uint32_t code = 0; code < max_code; ++code) {
      const double lo = decode_double(type, code);
      const double hi = decode_double(type, code + 1);
      const double mid = (lo + hi) / 2;
      const std::uint32_t even = code % 2 == 0 ? code : code + 1;
      EXPECT_EQ(encode(type, mid), even) << to_string(type) << " between " << lo << " " << hi;
      EXPECT_EQ(encode(type, std::nextafter(mid, kInf)), code + 1) << to_string(type);
      EXPECT_EQ(encode(type, std::nextafter(mid, 0.0)), code) << to_string(type);
      // The sign is a separate bit.
      const std::uint32_t sign = 1u << (bits_of_float_type(type) - 1);
      EXPECT_EQ(encode(type, -mid), even | sign) << to_string(type);
    }
  }
}

// An independent statement of bf16 rounding: the classic add-and-truncate on float bits.
TEST(Numeric, Bf16MatchesBitTrickOnRandomFloats) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    const float value = std::bit_cast<float>(bits);
    if (std::isnan(value)) continue;
    const std::uint32_t expected = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    ASSERT_EQ(encode(DataType::kBFloat16, value), expected) << std::hex << bits;
  }
}

TEST(Numeric, KnownValues) {
  EXPECT_EQ(decode_double(DataType::kFp8E4M3, 0x7E), 448.0);
  EXPECT_EQ(decode_double(DataType::kFp8E4M3, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(decode_double(DataType::kFp8E4M3, 0x08), std::ldexp(1.0, -6));  // min normal
  EXPECT_TRUE(std::isnan(decode_double(DataType::kFp8E4M3, 0x7F)));
  EXPECT_TRUE(std::isnan(decode_double(DataType::kFp8E4M3, 0xFF)));
  EXPECT_EQ(decode_double(DataType::kFp8E4M3, 0x78), 256.0);  // no inf: S.1111.000 is finite
  EXPECT_EQ(decode_double(DataType::kFp8E5M2, 0x7B), 57344.0);
  EXPECT_EQ(decode_double(DataType::kFp8E5M2, 0x7C), kInf);
  EXPECT_EQ(decode_double(DataType::kFp8E5M2, 0xFC), -kInf);
  EXPECT_EQ(decode_double(DataType::kFp8E5M2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(decode_double(DataType::kFloat16, 0x7BFF), 65504.0);
  EXPECT_EQ(decode_double(DataType::kFloat16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(decode_double(DataType::kFloat16, 0x7C00), kInf);
  EXPECT_EQ(decode_double(DataType::kBFloat16, 0x3F80), 1.0);
  EXPECT_EQ(decode_double(DataType::kE8M0, 127), 1.0);
  EXPECT_EQ(decode_double(DataType::kE8M0, 0), std::ldexp(1.0, -127));
  EXPECT_EQ(decode_double(DataType::kE8M0, 254), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(decode_double(DataType::kE8M0, 0xFF)));
  const std::array<double, 8> fp4 = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (std::uint32_t code = 0; code < 8; ++code) {
    EXPECT_EQ(decode_double(DataType::kFp4E2M1, code), fp4[code]);
    EXPECT_EQ(decode_double(DataType::kFp4E2M1, code | 8u), -fp4[code]);
  }
  EXPECT_EQ(decode_double(DataType::kInt8, 0x80), -128.0);
  EXPECT_EQ(decode_double(DataType::kInt32, 0xFFFFFFFFu), -1.0);
}

TEST(Numeric, MaxFinite) {
  EXPECT_EQ(numeric::max_finite(DataType::kFp8E4M3), 448.0);
  EXPECT_EQ(numeric::max_finite(DataType::kFp8E5M2), 57344.0);
  EXPECT_EQ(numeric::max_finite(DataType::kFp4E2M1), 6.0);
  EXPECT_EQ(numeric::max_finite(DataType::kFloat16), 65504.0);
  EXPECT_EQ(numeric::max_finite(DataType::kBFloat16), decode_double(DataType::kBFloat16, 0x7F7F));
  EXPECT_EQ(numeric::max_finite(DataType::kFloat32), std::numeric_limits<float>::max());
  EXPECT_EQ(numeric::max_finite(DataType::kInt8), 127.0);
  EXPECT_EQ(numeric::max_finite(DataType::kE8M0), std::ldexp(1.0, 127));
}

TEST(Numeric, TiesGoToEven) {
  // bf16 ulp at 1 is 2^-7: 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7 (odd).
  EXPECT_EQ(encode(DataType::kBFloat16, 1.0f + std::ldexp(1.0f, -8)), 0x3F80u);
  EXPECT_EQ(encode(DataType::kBFloat16, 1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82u);
  EXPECT_EQ(numeric::round_to(DataType::kBFloat16, 1.0f + std::ldexp(1.0f, -8)), 1.0f);
  EXPECT_EQ(encode(DataType::kFloat16, std::ldexp(1.0, -25)), 0x0000u);  // half the min subnormal
  EXPECT_EQ(encode(DataType::kFloat16, 3 * std::ldexp(1.0, -25)), 0x0002u);
  EXPECT_EQ(encode(DataType::kFp4E2M1, 5.0), 0x6u);   // 4 (code 6) over 6 (code 7)
  EXPECT_EQ(encode(DataType::kFp4E2M1, 2.5), 0x4u);   // 2 over 3
  EXPECT_EQ(encode(DataType::kFp4E2M1, 0.25), 0x0u);  // 0 over 0.5
  EXPECT_EQ(encode(DataType::kFp4E2M1, 0.75), 0x2u);  // 1 over 0.5
  EXPECT_EQ(encode(DataType::kInt8, 2.5), 2u);
  EXPECT_EQ(encode(DataType::kInt8, 3.5), 4u);
  EXPECT_EQ(encode(DataType::kInt8, -2.5), 0xFEu);
  EXPECT_EQ(encode(DataType::kInt32, 2.5), 2u);
  EXPECT_EQ(encode(DataType::kInt32, -3.5), static_cast<std::uint32_t>(-4));
}

TEST(Numeric, OverflowSaturatesOrGoesToInf) {
  // fp16 and bf16 follow cvt.rn without .satfinite: past max + half an ulp is inf.
  EXPECT_EQ(encode(DataType::kFloat16, 65519.0), 0x7BFFu);
  EXPECT_EQ(encode(DataType::kFloat16, 65520.0), 0x7C00u);
  EXPECT_EQ(encode(DataType::kFloat16, -1e6), 0xFC00u);
  EXPECT_EQ(encode(DataType::kBFloat16, kInf), 0x7F80u);
  EXPECT_EQ(encode(DataType::kFloat32, 1e300), 0x7F800000u);
  // fp8 and fp4 follow .satfinite.
  EXPECT_EQ(encode(DataType::kFp8E4M3, 464.0), 0x7Eu);  // would round to 480, a NaN code
  EXPECT_EQ(encode(DataType::kFp8E4M3, 1e6), 0x7Eu);
  EXPECT_EQ(encode(DataType::kFp8E4M3, -kInf), 0xFEu);
  EXPECT_EQ(encode(DataType::kFp8E5M2, 1e9), 0x7Bu);
  EXPECT_EQ(encode(DataType::kFp8E5M2, kInf), 0x7Bu);
  EXPECT_EQ(encode(DataType::kFp8E5M2, -kInf), 0xFBu);
  EXPECT_EQ(encode(DataType::kFp4E2M1, 7.0), 0x7u);
  EXPECT_EQ(encode(DataType::kFp4E2M1, -100.0), 0xFu);
  EXPECT_EQ(encode(DataType::kInt8, 127.5), 127u);
  EXPECT_EQ(encode(DataType::kInt8, -200.0), 0x80u);
  EXPECT_EQ(encode(DataType::kInt32, 1e10), 0x7FFFFFFFu);
  EXPECT_EQ(encode(DataType::kInt32, -1e10), 0x80000000u);
}

TEST(Numeric, NanEncodings) {
  EXPECT_EQ(encode(DataType::kFp8E4M3, kNan), 0x7Fu);
  EXPECT_EQ(encode(DataType::kFp8E5M2, kNan), 0x7Fu);
  EXPECT_EQ(encode(DataType::kFloat16, kNan), 0x7FFFu);
  EXPECT_EQ(encode(DataType::kBFloat16, kNan), 0x7FFFu);
  EXPECT_TRUE(std::isnan(numeric::round_to(DataType::kFloat32, std::nanf(""))));
  EXPECT_EQ(encode(DataType::kFp4E2M1, kNan), 0x7u);  // no NaN in e2m1: +max, as .satfinite
  EXPECT_EQ(encode(DataType::kInt8, kNan), 0u);
  EXPECT_EQ(encode(DataType::kE8M0, kNan), 0xFFu);
}

TEST(Numeric, E8M0RoundsToNearestPowerOfTwo) {
  EXPECT_EQ(encode(DataType::kE8M0, 1.0), 127u);
  EXPECT_EQ(encode(DataType::kE8M0, 1.49), 127u);
  EXPECT_EQ(encode(DataType::kE8M0, 1.5), 128u);   // midpoint goes up
  EXPECT_EQ(encode(DataType::kE8M0, 0.74), 126u);  // 1.48 * 2^-1
  EXPECT_EQ(encode(DataType::kE8M0, 0.75), 127u);  // 1.5 * 2^-1
  EXPECT_EQ(encode(DataType::kE8M0, 0.3), 125u);   // 1.2 * 2^-2
  EXPECT_EQ(encode(DataType::kE8M0, 3.0), 129u);
  EXPECT_EQ(encode(DataType::kE8M0, 0.0), 0u);  // no zero: the smallest power
  EXPECT_EQ(encode(DataType::kE8M0, 1e-300), 0u);
  EXPECT_EQ(encode(DataType::kE8M0, 1e300), 254u);  // saturates below the NaN code
  EXPECT_EQ(encode(DataType::kE8M0, kInf), 254u);
  EXPECT_EQ(encode(DataType::kE8M0, -1.0), 0xFFu);
}

// A value held in fp64 rounds once; through float it would round twice and land elsewhere.
TEST(Numeric, RoundToDoubleRoundsOnce) {
  const double value = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);
  EXPECT_EQ(numeric::round_to_double(DataType::kBFloat16, value), 1.0 + std::ldexp(1.0, -7));
  EXPECT_EQ(numeric::round_to(DataType::kBFloat16, static_cast<float>(value)), 1.0f);
  EXPECT_EQ(numeric::round_to_double(DataType::kFloat32, 0.1), static_cast<double>(0.1f));
  EXPECT_EQ(numeric::round_to_double(DataType::kNotSet, 0.1), 0.1);
}

// Storing a value rounded to the stored type writes the code of the value itself, NaN,
// infinities and overflow included: what the generated epilogue relies on when it stores a
// rounded node's value before rounding (codegen/epilogue.cpp, stored_value). This checks
// the host model; the kernel's conversions are the PTX ones it models (element_io.cuh), and
// the GPU suites compare the kernel's stores with the reference.
TEST(Numeric, RoundingBeforeAStoreOfTheSameTypeChangesNoCode) {
  std::mt19937 rng(20261205);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1e-45f,
                               -1e-30f,
                               65504.0f,
                               65520.0f,
                               448.0f,
                               480.0f,
                               57344.0f,
                               6.5f,
                               3.0e38f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i < 20000; ++i) {
    // Random bit patterns cover every exponent, denormals and NaN payloads.
    values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  }
  for (const DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                              DataType::kFp8E4M3, DataType::kFp8E5M2, DataType::kFp4E2M1,
                              DataType::kE8M0, DataType::kInt8, DataType::kInt32}) {
    for (const float v : values) {
      EXPECT_EQ(encode(type, numeric::round_to(type, v)), encode(type, v))
          << to_string(type) << " value " << v << " (bits " << std::bit_cast<std::uint32_t>(v)
          << ")";
    }
  }
}

TEST(Numeric, Fp4StoreKeepsTheOtherNibble) {
  std::array<std::uint8_t, 2> bytes = {0xAB, 0xCD};
  EXPECT_EQ(numeric::load(DataType::kFp4E2M1, bytes.data(), 0), -1.5f);  // 0xB
  EXPECT_EQ(numeric::load(DataType::kFp4E2M1, bytes.data(), 1), -1.0f);  // 0xA
  numeric::store(DataType::kFp4E2M1, bytes.data(), 1, 6.0f);
  EXPECT_EQ(bytes[0], 0x7B);
  EXPECT_EQ(bytes[1], 0xCD);
  numeric::store(DataType::kFp4E2M1, bytes.data(), 2, -0.5f);
  EXPECT_EQ(bytes[0], 0x7B);
  EXPECT_EQ(bytes[1], 0xC9);
  numeric::store(DataType::kFp4E2M1, bytes.data(), 3, 0.0f);
  EXPECT_EQ(bytes[1], 0x09);
  EXPECT_EQ(numeric::load_double(DataType::kFp4E2M1, bytes.data(), 2), -0.5);
}

TEST(Numeric, WideTypesAreLittleEndianAtAnyAlignment) {
  std::vector<std::uint8_t> bytes(11, 0xEE);
  // Element 1 of a buffer that starts one byte in: not aligned for the type.
  std::uint8_t* base = bytes.data() + 1;
  numeric::store(DataType::kBFloat16, base, 1, 1.0f);
  EXPECT_EQ(bytes[3], 0x80);
  EXPECT_EQ(bytes[4], 0x3F);
  EXPECT_EQ(bytes[5], 0xEE);
  numeric::store(DataType::kFloat32, base, 1, 1.0f);
  EXPECT_EQ(bytes[5], 0x00);
  EXPECT_EQ(bytes[6], 0x00);
  EXPECT_EQ(bytes[7], 0x80);
  EXPECT_EQ(bytes[8], 0x3F);
  EXPECT_EQ(numeric::load(DataType::kFloat32, base, 1), 1.0f);
  numeric::store_double(DataType::kInt32, base, 0, -2.0);
  EXPECT_EQ(numeric::load_double(DataType::kInt32, base, 0), -2.0);
  EXPECT_EQ(bytes[1], 0xFE);
  EXPECT_EQ(bytes[4], 0xFF);
  numeric::store(DataType::kFp8E4M3, base, 9, 448.0f);
  EXPECT_EQ(bytes[10], 0x7E);
}

TEST(Numeric, NotSetStoresNothing) {
  std::array<std::uint8_t, 4> bytes = {1, 2, 3, 4};
  numeric::store(DataType::kNotSet, bytes.data(), 0, 5.0f);
  EXPECT_EQ(bytes, (std::array<std::uint8_t, 4>{1, 2, 3, 4}));
  EXPECT_TRUE(std::isnan(numeric::load(DataType::kNotSet, bytes.data(), 0)));
  EXPECT_EQ(numeric::round_to(DataType::kNotSet, 0.3f), 0.3f);
}
