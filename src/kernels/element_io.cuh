// Element access for the generated epilogue: fp32 to each stored type and back, and loads
// and stores at (batch, m, n) of a kernel parameter (kernel axis order, strides in
// elements; a broadcast or reduced axis has stride 0). Each conversion is the one
// numeric.h models, so the host device and the kernel round alike. Device code; no host
// headers (NVRTC).
#pragma once

#include "kernels/kernel_args.h"    // BufferArg
#include "kernels/ptx/convert.cuh"  // cvt wrappers
#include "kernels/soft_float.cuh"   // e2m1, e8m0

namespace fusedgemm::kernels {

// A stored element type, as the generator names it (fusedgemm::DataType is host code).
enum class Elem : int { kF32, kF16, kBF16, kE4M3, kE5M2, kE2M1, kE8M0, kS8, kS32 };

// The stored code of v, in the low bits.
template <Elem E>
__device__ __forceinline__ unsigned encode(float v) {
  if constexpr (E == Elem::kF32) return __float_as_uint(v);
  if constexpr (E == Elem::kF16) return ptx::cvt_rn_f16_f32(v);
  if constexpr (E == Elem::kBF16) return ptx::cvt_rn_bf16_f32(v);
  if constexpr (E == Elem::kE4M3) return ptx::cvt_rn_satfinite_e4m3x2_f32(0.0f, v) & 0xFFu;
  if constexpr (E == Elem::kE5M2) return ptx::cvt_rn_satfinite_e5m2x2_f32(0.0f, v) & 0xFFu;
  if constexpr (E == Elem::kE2M1) return encode_e2m1(v);
  if constexpr (E == Elem::kE8M0) return encode_e8m0(v);
  if constexpr (E == Elem::kS8) return static_cast<unsigned>(ptx::cvt_rni_sat_s8_f32(v)) & 0xFFu;
  if constexpr (E == Elem::kS32) return static_cast<unsigned>(ptx::cvt_rni_sat_s32_f32(v));
}

// The fp32 value of a stored code (bits above the type's width are ignored).
template <Elem E>
__device__ __forceinline__ float decode(unsigned code) {
  if constexpr (E == Elem::kF32) return __uint_as_float(code);
  if constexpr (E == Elem::kF16) return ptx::cvt_f32_f16(static_cast<unsigned short>(code));
  // bf16 is the upper half of an fp32: exact, no instruction needed.
  if constexpr (E == Elem::kBF16) return __uint_as_float((code & 0xFFFFu) << 16);
  if constexpr (E == Elem::kE4M3) {
    const unsigned pair = ptx::cvt_rn_f16x2_e4m3x2(static_cast<unsigned short>(code & 0xFFu));
    return ptx::cvt_f32_f16(static_cast<unsigned short>(pair & 0xFFFFu));
  }
  if constexpr (E == Elem::kE5M2) {
    const unsigned pair = ptx::cvt_rn_f16x2_e5m2x2(static_cast<unsigned short>(code & 0xFFu));
    return ptx::cvt_f32_f16(static_cast<unsigned short>(pair & 0xFFFFu));
  }
  if constexpr (E == Elem::kE2M1) return decode_e2m1(code);
  if constexpr (E == Elem::kE8M0) return decode_e8m0(code);
  if constexpr (E == Elem::kS8) return static_cast<float>(static_cast<signed char>(code & 0xFFu));
  if constexpr (E == Elem::kS32) return ptx::cvt_rn_f32_s32(static_cast<int>(code));
}

// What a declared data type does to a running value: decode(encode(v)).
template <Elem E>
__device__ __forceinline__ float round_to(float v) {
  if constexpr (E == Elem::kF32) {
    return v;
  } else {
    return decode<E>(encode<E>(v));
  }
}

// The largest finite value: the divisor of a block scale (numeric::max_finite).
template <Elem E>
__device__ constexpr float max_finite() {
  static_assert(E == Elem::kE4M3 || E == Elem::kE5M2 || E == Elem::kE2M1,
                "max_finite: only the quantized value types (fp8, fp4) need it; add the type");
  if constexpr (E == Elem::kE4M3) return 448.0f;
  if constexpr (E == Elem::kE5M2) return 57344.0f;
  if constexpr (E == Elem::kE2M1) return 6.0f;
}

// Element offset of (batch, m, n), kernel axis order.
__device__ __forceinline__ long long element(const BufferArg& a, long long b, long long m,
                                             long long n) {
  return b * a.stride[0] + m * a.stride[1] + n * a.stride[2];
}

// Loads one element as fp32. Aux buffers are aligned to one element (call rule
// `alignment`), so a load of the element's width is aligned. fp4 is never an aux.
template <Elem E>
__device__ __forceinline__ float load_at(const BufferArg& a, long long b, long long m,
                                         long long n) {
  static_assert(E != Elem::kE2M1, "load_at: fp4 aux are not loaded; the gate declines them");
  const long long i = element(a, b, m, n);
  if constexpr (E == Elem::kF32 || E == Elem::kS32) {
    return decode<E>(static_cast<const unsigned*>(a.data)[i]);
  } else if constexpr (E == Elem::kF16 || E == Elem::kBF16) {
    return decode<E>(static_cast<const unsigned short*>(a.data)[i]);
  } else {
    return decode<E>(static_cast<const unsigned char*>(a.data)[i]);
  }
}

// Stores v as one element (scalar store of the element's width). fp4 has its own store
// (two values share a byte): block_quantize.cuh.
template <Elem E>
__device__ __forceinline__ void store_at(const BufferArg& a, long long b, long long m, long long n,
                                         float v) {
  static_assert(E != Elem::kE2M1, "store_at: fp4 is stored in pairs by block_quantize");
  const long long i = element(a, b, m, n);
  const unsigned code = encode<E>(v);
  if constexpr (E == Elem::kF32 || E == Elem::kS32) {
    static_cast<unsigned*>(a.data)[i] = code;
  } else if constexpr (E == Elem::kF16 || E == Elem::kBF16) {
    static_cast<unsigned short*>(a.data)[i] = static_cast<unsigned short>(code);
  } else {
    static_cast<unsigned char*>(a.data)[i] = static_cast<unsigned char>(code);
  }
}

// Whether the two elements (m, n), (m, n + 1), n even, of every row of this call lie side by
// side in one aligned word of twice the element's width: unit stride on N, even strides
// elsewhere and a base aligned to the pair. Uniform over the launch.
template <Elem E>
__device__ __forceinline__ bool pairs_fill_words(const BufferArg& a) {
  constexpr unsigned long long kPairBytes = E == Elem::kF32 || E == Elem::kS32    ? 8
                                            : E == Elem::kF16 || E == Elem::kBF16 ? 4
                                                                                  : 2;
  return a.stride[2] == 1 && a.stride[1] % 2 == 0 && a.stride[0] % 2 == 0 &&
         reinterpret_cast<unsigned long long>(a.data) % kPairBytes == 0;
}

}  // namespace fusedgemm::kernels
