// Block-scaled quantized outputs: per row, one scale per block of BlockCols columns along
// N, scale = amax / max_finite(Y) (1 when the block is all zeros), rounded to the scale's
// type S, and values y = v / scale stored as Y — runtime/host_device.cpp's quantize(),
// operation for operation. Blocks lie inside one tile (TileN % BlockCols == 0, tiles start
// at multiples of TileN), and a row's columns belong to the 4 lanes of one quad, so the
// block's amax is each lane's columns of the block and then xor 1, 2 in the quad: no
// shared memory. Device code; no host headers (NVRTC).
#pragma once

#include "kernels/element_io.cuh"      // Elem, encode, round_to, store_at, max_finite
#include "kernels/fragment_slots.cuh"  // FragmentSlots
#include "kernels/kernel_args.h"       // KernelArgs, BufferArg

namespace fusedgemm::kernels {

// Sets the 4-bit code of fp4 element `index` (two per byte, the even element in the low
// nibble) without touching the other nibble, which another thread or CTA may own: an
// atomic AND clears ours, an atomic OR sets it. Nobody else writes these 4 bits, so the
// pair of atomics leaves exactly `code` in them.
__device__ __forceinline__ void store_e2m1_nibble(void* base, long long index, unsigned code) {
  const unsigned long long byte =
      reinterpret_cast<unsigned long long>(static_cast<unsigned char*>(base) + index / 2);
  unsigned* word = reinterpret_cast<unsigned*>(byte & ~3ull);
  const unsigned shift = static_cast<unsigned>((byte & 3ull) * 8ull + (index % 2) * 4);
  atomicAnd(word, ~(0xFu << shift));
  atomicOr(word, (code & 0xFu) << shift);
}

// Whether every fp4 pair (n even, n + 1) of this call fills one whole byte: unit stride on
// N, even strides elsewhere and an even N. Uniform over the launch, so a launch either
// writes whole bytes only or nibbles through atomics only, never a plain byte store and an
// atomic on one word.
__device__ __forceinline__ bool e2m1_pairs_fill_bytes(const KernelArgs& args, const BufferArg& y) {
  return y.stride[2] == 1 && y.stride[1] % 2 == 0 && y.stride[0] % 2 == 0 && args.n % 2 == 0;
}

template <Elem Y, Elem S, int BlockCols, int TileM, int TileN>
__device__ __forceinline__ void block_quantize(const KernelArgs& args, const BufferArg& y,
                                               const BufferArg& scale, const TileCoord& tile,
                                               const float (&in)[Fragment<TileM, TileN>::kCount],
                                               int thread) {
  static_assert(Y == Elem::kE4M3 || Y == Elem::kE5M2 || Y == Elem::kE2M1,
                "block_quantize: values are fp8 or fp4");
  static_assert(BlockCols % 8 == 0, "block_quantize: BlockCols must be a multiple of 8");
  static_assert(TileN % BlockCols == 0,
                "block_quantize: TileN must be a multiple of the block width; choose a tile "
                "at least as wide as the block");
  using Slots = FragmentSlots<TileM, TileN>;
  constexpr int kSlotsPerBlock = BlockCols / 4;  // a lane's columns of one block
  bool whole_bytes = false;
  if constexpr (Y == Elem::kE2M1) whole_bytes = e2m1_pairs_fill_bytes(args, y);
#pragma unroll
  for (int r = 0; r < Slots::kRows; ++r) {
    const long long m = tile.m0 + Slots::row_of(r, thread);
#pragma unroll
    for (int block = 0; block < TileN / BlockCols; ++block) {
      const int first = block * kSlotsPerBlock;
      float amax = 0.0f;
#pragma unroll
      for (int c = first; c < first + kSlotsPerBlock; ++c) {
        if (tile.n0 + Slots::col_of(c, thread) < args.n) {
          amax = fmaxf(amax, fabsf(in[Slots::index_of(r, c)]));
        }
      }
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
      amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
      const float sc = round_to<S>(amax == 0.0f ? 1.0f : __fdiv_rn(amax, max_finite<Y>()));
      const long long n_block = tile.n0 + block * BlockCols;
      if (m < args.m && n_block < args.n) {
        if (thread % 4 == 0) store_at<S>(scale, tile.batch, m, n_block / BlockCols, sc);
#pragma unroll
        for (int c = first; c < first + kSlotsPerBlock; c += 2) {
          // Slots c (even) and c + 1 are columns n and n + 1 of one lane, n even.
          const long long n = tile.n0 + Slots::col_of(c, thread);
          const float y0 = __fdiv_rn(in[Slots::index_of(r, c)], sc);
          const float y1 = __fdiv_rn(in[Slots::index_of(r, c + 1)], sc);
          if constexpr (Y == Elem::kE2M1) {
            const long long i = element(y, tile.batch, m, n);
            if (whole_bytes) {
              if (n < args.n) {
                static_cast<unsigned char*>(y.data)[i / 2] =
                    static_cast<unsigned char>(encode_e2m1(y0) | (encode_e2m1(y1) << 4));
              }
            } else {
              if (n < args.n) store_e2m1_nibble(y.data, i, encode_e2m1(y0));
              if (n + 1 < args.n) store_e2m1_nibble(y.data, i + y.stride[2], encode_e2m1(y1));
            }
          } else {
            if (n < args.n) store_at<Y>(y, tile.batch, m, n, y0);
            if (n + 1 < args.n) store_at<Y>(y, tile.batch, m, n + 1, y1);
          }
        }
      }
    }
  }
}

}  // namespace fusedgemm::kernels
