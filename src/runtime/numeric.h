// Exact host conversions between stored element encodings and float/double, bit-faithful
// to what Hopper's `cvt` instructions produce. The host device (an interpreter that treats
// host memory as device memory) and the tests use them, so the rounding a kernel applies
// and the rounding its oracle predicts are one definition.
//
// Encoding is round-to-nearest-even on the exact value of the input, with these
// out-of-range rules (PTX ISA 8.x, `cvt` section):
//   fp32      `cvt.rn.f32.f64`: overflow gives inf; NaN stays NaN.
//   fp16      `cvt.rn.f16.f32`: subnormals kept, overflow (>= 65520) gives inf, NaN gives
//             the canonical NaN 0x7FFF.
//   bf16      `cvt.rn.bf16.f32`: as fp16, canonical NaN 0x7FFF.
//   fp8_e4m3  `cvt.rn.satfinite.e4m3x2.f32` (OCP FP8 E4M3: bias 7, no inf, NaN S.1111.111):
//             |x| beyond 448 and inf saturate to +-448; NaN gives 0x7F.
//   fp8_e5m2  `cvt.rn.satfinite.e5m2x2.f32` (bias 15): |x| beyond 57344 and inf saturate to
//             +-57344; NaN gives 0x7F.
//   fp4_e2m1  `cvt.rn.satfinite.e2m1x2.f32` (values 0, 0.5, 1, 1.5, 2, 3, 4, 6 with sign):
//             |x| beyond 6 and inf saturate to +-6; NaN, which e2m1 cannot hold, gives +6
//             as `.satfinite` does for formats without NaN.
//   e8m0      2^(code - 127), code 0xFF is NaN. Our choice (no Hopper `cvt` exists): the
//             nearest power of two by linear distance, the midpoint 1.5 * 2^e rounding up;
//             0 and anything below 2^-127 give 2^-127 (code 0x00), anything at or above
//             1.5 * 2^127 and +inf give 2^127 (0xFE); NaN and negative values give NaN.
//   int8      `cvt.rni.sat.s8.f32`: nearest, ties to even, saturated to [-128, 127]; NaN
//             gives 0.
//   int32     `cvt.rni.sat.s32.f32`: as int8, saturated to [-2^31, 2^31 - 1].
//
// Memory: an element index counts values, not bytes. fp4 packs two values per byte,
// element 2i in the low nibble and 2i + 1 in the high nibble; every other type is stored
// little-endian in bits_of(type) / 8 bytes. kNotSet is no storage: loads give NaN, stores
// write nothing, round_to returns its input.
#pragma once

#include <cstdint>

#include "fusedgemm/data_type.h"  // DataType

namespace fusedgemm::numeric {

// The stored code of `value` (exact: a float converts to double without rounding), in the
// low bits_of(type) bits of the result.
std::uint32_t encode(DataType type, double value) noexcept;
// The value of a stored code; bits above bits_of(type) are ignored. int32 codes beyond
// 2^24 lose precision in a float; decode_double is exact for every type.
float decode(DataType type, std::uint32_t code) noexcept;
double decode_double(DataType type, std::uint32_t code) noexcept;

// Element `element_index` of the buffer at `base` (no alignment required).
float load(DataType type, const void* base, std::int64_t element_index) noexcept;
double load_double(DataType type, const void* base, std::int64_t element_index) noexcept;
// Writes encode(type, value) into element `element_index`; for fp4 the other nibble of the
// byte is left as it was.
void store(DataType type, void* base, std::int64_t element_index, float value) noexcept;
void store_double(DataType type, void* base, std::int64_t element_index, double value) noexcept;

// decode(encode(v)): what a declared data type does to a running value. Identity for fp32
// floats.
float round_to(DataType type, float value) noexcept;
// The same from a double in one rounding step (no detour through float), so a value held
// in fp64 rounds as the exact real would. fp32 narrows the double to float.
double round_to_double(DataType type, double value) noexcept;

// The largest finite value of the type: 448 for e4m3, 57344 for e5m2, 6 for e2m1, 127 for
// int8, 2^127 for e8m0, ...; 0 for kNotSet.
double max_finite(DataType type) noexcept;

}  // namespace fusedgemm::numeric
