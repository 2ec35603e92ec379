// How a tap (reduction output) combines partial results: inside a warp with
// __shfl_xor_sync, and across the CTAs of a reduction group when the last of them folds
// their partials in a fixed order (kernels/tap_commit.cuh). Device code; no host headers
// (NVRTC).
//
// Modes map onto four combines: add, avg, norm1 and norm2 sum (avg adds v / count, norm1
// adds |v|, norm2 adds v * v; the generator applies that per value), max and amax take the
// maximum (amax of |v|), min the minimum, mul the product.
#pragma once

namespace fusedgemm::kernels {

enum class TapCombine : int { kSum, kMax, kMin, kProduct };

// a (+) b. max and min ignore a NaN operand (fmaxf/fminf), as the host's std::fmax does;
// a partial that starts at the identity therefore never becomes NaN.
template <TapCombine C>
__device__ __forceinline__ float tap_merge(float a, float b) {
  if constexpr (C == TapCombine::kSum) return __fadd_rn(a, b);
  if constexpr (C == TapCombine::kMax) return fmaxf(a, b);
  if constexpr (C == TapCombine::kMin) return fminf(a, b);
  if constexpr (C == TapCombine::kProduct) return __fmul_rn(a, b);
}

// Combines v across the lanes whose index differs only in the bits of [first, last]
// (powers of two): xor 1, 2 joins the 4 lanes of a row; xor 4, 8, 16 the 8 lanes of a
// column; xor 1 .. 16 the whole warp. Every lane of the warp must call it. The butterfly's
// order is fixed, so the result is the same bits on every run.
template <TapCombine C, int First, int Last>
__device__ __forceinline__ float warp_combine(float v) {
#pragma unroll
  for (int offset = First; offset <= Last; offset *= 2) {
    v = tap_merge<C>(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  }
  return v;
}

}  // namespace fusedgemm::kernels
