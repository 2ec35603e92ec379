// Encoders and decoders for the two stored types Hopper has no `cvt` for: fp4 e2m1 (the
// e2m1x2 forms need sm_100a) and the e8m0 scale factor. Bit-faithful to numeric.cpp
// (encode/decode), which the host tests compare them with on a sweep of fp32 bit patterns;
// that is why these functions are __host__ __device__ and use no intrinsics.
// No host headers (NVRTC).
#pragma once

#if defined(__CUDACC__)
#define FG_HOST_DEVICE __host__ __device__
#else
#define FG_HOST_DEVICE
#endif

namespace fusedgemm::kernels {

// Device passes (nvcc's and NVRTC's, which has no __builtin_memcpy) use the intrinsics;
// the host pass (host tests) copies the bytes.
FG_HOST_DEVICE inline unsigned f32_bits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  unsigned bits;
  __builtin_memcpy(&bits, &v, sizeof(bits));
  return bits;
#endif
}

FG_HOST_DEVICE inline float f32_from_bits(unsigned bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float v;
  __builtin_memcpy(&v, &bits, sizeof(v));
  return v;
#endif
}

// e2m1 codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 (bit 3 is the sign). Nearest with ties to
// the even code: a threshold into an odd code is strict (>), into an even code inclusive
// (>=). Beyond 6 and inf saturate to 6 (.satfinite); NaN gives +6 (0x7), as numeric.cpp
// does for a format without NaN. The sign of zero and of values rounding to zero is kept.
FG_HOST_DEVICE inline unsigned encode_e2m1(float v) {
  if (v != v) return 0x7u;
  const unsigned sign = (f32_bits(v) >> 28) & 0x8u;
  const float a = v < 0.0f ? -v : v;
  const unsigned code = static_cast<unsigned>(a > 0.25f) + static_cast<unsigned>(a >= 0.75f) +
                        static_cast<unsigned>(a > 1.25f) + static_cast<unsigned>(a >= 1.75f) +
                        static_cast<unsigned>(a > 2.5f) + static_cast<unsigned>(a >= 3.5f) +
                        static_cast<unsigned>(a > 5.0f);
  return sign | code;
}

FG_HOST_DEVICE inline float decode_e2m1(unsigned code) {
  const unsigned magnitude = code & 0x7u;
  // 0.5 * m for m < 4 (0, 0.5, 1, 1.5); then 2, 3, 4, 6.
  const float value = magnitude < 4u    ? 0.5f * static_cast<float>(magnitude)
                      : magnitude < 6u  ? static_cast<float>(magnitude - 2u)
                      : magnitude == 6u ? 4.0f
                                        : 6.0f;
  return (code & 0x8u) != 0u ? -value : value;
}

// e8m0 is 2^(code - 127), 0xFF is NaN. numeric.cpp's choice, kept here bit for bit: the
// nearest power of two by linear distance with the midpoint 1.5 * 2^e going up (that is, a
// mantissa at or above 0x400000 rounds up); 0 and anything below 2^-127 give code 0;
// at or above 1.5 * 2^127 and +inf give 0xFE; NaN and negative values give 0xFF.
FG_HOST_DEVICE inline unsigned encode_e8m0(float v) {
  const unsigned bits = f32_bits(v);
  const unsigned exponent = (bits >> 23) & 0xFFu;
  const unsigned mantissa = bits & 0x7FFFFFu;
  if (v != v) return 0xFFu;
  if ((bits & 0x7FFFFFFFu) == 0u) return 0x00u;  // +-0
  if ((bits >> 31) != 0u) return 0xFFu;          // negative
  if (exponent == 0xFFu) return 0xFEu;           // +inf
  // A subnormal is below 2^-126: only [1.5 * 2^-127, 2^-126) reaches code 1.
  if (exponent == 0u) return mantissa >= 0x600000u ? 0x01u : 0x00u;
  const unsigned code = exponent + (mantissa >= 0x400000u ? 1u : 0u);
  return code > 0xFEu ? 0xFEu : code;
}

FG_HOST_DEVICE inline float decode_e8m0(unsigned code) {
  code &= 0xFFu;
  if (code == 0xFFu) return f32_from_bits(0x7FC00000u);  // the quiet NaN
  if (code == 0u) return f32_from_bits(0x00400000u);     // 2^-127, a subnormal float
  return f32_from_bits(code << 23);
}

}  // namespace fusedgemm::kernels
