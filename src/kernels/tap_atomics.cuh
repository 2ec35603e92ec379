// How a tap (reduction output) combines partial results: inside a warp with
// __shfl_xor_sync, and into global memory with one atomic per partial. The tap buffer
// holds its mode's seed (recipe::seed_word) before the launch, so every atomic only folds
// a partial into a valid running value. Device code; no host headers (NVRTC).
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
// column; xor 1 .. 16 the whole warp. Every lane of the warp must call it.
template <TapCombine C, int First, int Last>
__device__ __forceinline__ float warp_combine(float v) {
#pragma unroll
  for (int offset = First; offset <= Last; offset *= 2) {
    v = tap_merge<C>(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  }
  return v;
}

// max on fp32 through integer atomics. For sign bit 0 the fp32 order equals the signed
// int32 order of the bits, so atomicMax(int) is the float max whenever the stored value is
// also non-negative, and any negative stored value (a negative int) loses to it, as it
// should. For sign bit 1 the order of the bits as unsigned is the reverse of the float
// order among negatives, so atomicMin(unsigned) keeps the larger float among negatives,
// and a non-negative stored value (unsigned below 0x80000000) wins, as it should. Both
// cases need the stored value not to be NaN: the seed -inf (0xff800000) is an ordinary
// negative in this order and is replaced by any other value, and a NaN v is dropped here,
// as std::fmax drops it on the host.
__device__ __forceinline__ void atomic_max_f32(float* word, float v) {
  if (v != v) return;
  if ((__float_as_uint(v) >> 31) == 0u) {
    atomicMax(reinterpret_cast<int*>(word), __float_as_int(v));
  } else {
    atomicMin(reinterpret_cast<unsigned*>(word), __float_as_uint(v));
  }
}

// min: the mirror image (seed +inf, 0x7f800000). amax uses atomic_max_f32 with |v| and the
// seed 0: both non-negative, the first case only.
__device__ __forceinline__ void atomic_min_f32(float* word, float v) {
  if (v != v) return;
  if ((__float_as_uint(v) >> 31) == 0u) {
    atomicMin(reinterpret_cast<int*>(word), __float_as_int(v));
  } else {
    atomicMax(reinterpret_cast<unsigned*>(word), __float_as_uint(v));
  }
}

// product: no hardware atomic multiply; a compare-and-swap loop on the bits (comparing
// bits, so a NaN product still ends the loop).
__device__ __forceinline__ void atomic_mul_f32(float* word, float v) {
  unsigned* bits = reinterpret_cast<unsigned*>(word);
  unsigned seen = *reinterpret_cast<volatile unsigned*>(bits);
  unsigned assumed;
  do {
    assumed = seen;
    seen = atomicCAS(bits, assumed, __float_as_uint(__fmul_rn(__uint_as_float(assumed), v)));
  } while (seen != assumed);
}

// Folds one partial into the tap element at `word`.
template <TapCombine C>
__device__ __forceinline__ void tap_atomic(float* word, float partial) {
  if constexpr (C == TapCombine::kSum) atomicAdd(word, partial);
  if constexpr (C == TapCombine::kMax) atomic_max_f32(word, partial);
  if constexpr (C == TapCombine::kMin) atomic_min_f32(word, partial);
  if constexpr (C == TapCombine::kProduct) atomic_mul_f32(word, partial);
}

}  // namespace fusedgemm::kernels
