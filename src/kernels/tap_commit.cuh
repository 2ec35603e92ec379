// The CTA side of a tap: after the generated epilogue has folded each thread's values
// into per-thread partials (one per row slot, per column slot, or one for the tile), these
// functions reduce them inside the CTA and issue ONE atomic per tap element per CTA; then
// norm2 taps take their square roots in the last tile to finish. All 128 consumer threads
// call every function here (they contain warp shuffles and named barriers).
// Device code; no host headers (NVRTC).
#pragma once

#include "kernels/element_io.cuh"      // element
#include "kernels/fragment_slots.cuh"  // FragmentSlots
#include "kernels/kernel_args.h"       // KernelArgs, BufferArg
#include "kernels/ptx/barrier.cuh"     // bar_sync
#include "kernels/tap_atomics.cuh"     // TapCombine, warp_combine, tap_atomic

namespace fusedgemm::kernels {

// The epilogue runs on the one consumer warpgroup; its CTA-wide steps synchronize on this
// named barrier, so the mainloop must not use barrier 1 while the epilogue runs (0 is
// __syncthreads).
inline constexpr int kEpilogueBarrierId = 1;
inline constexpr int kEpilogueThreads = 128;

__device__ __forceinline__ void epilogue_barrier() {
  ptx::bar_sync(kEpilogueBarrierId, kEpilogueThreads);
}

template <int N>
__device__ __forceinline__ void tap_fill(float (&part)[N], float identity) {
#pragma unroll
  for (int i = 0; i < N; ++i) part[i] = identity;
}

// avg adds v * (1 / count): count is the number of problem points reduced into one tap
// element, the product of the call's extents over the axes where the tap's extent is 1 —
// the host device's rule, computed the same way (in double, then rounded once to fp32).
__device__ __forceinline__ float tap_inv_count(const KernelArgs& args, const BufferArg& tap) {
  double count = 1.0;
  if (tap.shape[0] == 1) count *= static_cast<double>(args.batch);
  if (tap.shape[1] == 1) count *= static_cast<double>(args.m);
  if (tap.shape[2] == 1) count *= static_cast<double>(args.n);
  return __double2float_rn(__ddiv_rn(1.0, count));
}

__device__ __forceinline__ float* tap_word(const BufferArg& tap, long long b, long long m,
                                           long long n) {
  return static_cast<float*>(tap.data) + element(tap, b, m, n);
}

// A tap reducing N (extent 1 on kernel axis 2): a row belongs to one warp and its values
// to the 4 lanes of one quad. Per row slot: combine the quad (xor 1, 2), then lane 0 of the
// quad folds the row into element (batch, m, 0).
template <TapCombine C, int TileM, int TileN>
__device__ __forceinline__ void tap_commit_rows(
    const KernelArgs& args, const BufferArg& tap, const TileCoord& tile,
    const float (&part)[FragmentSlots<TileM, TileN>::kRows], int thread) {
  using Slots = FragmentSlots<TileM, TileN>;
#pragma unroll
  for (int r = 0; r < Slots::kRows; ++r) {
    const float row = warp_combine<C, 1, 2>(part[r]);
    const long long m = tile.m0 + Slots::row_of(r, thread);
    if (thread % 4 == 0 && m < args.m) tap_atomic<C>(tap_word(tap, tile.batch, m, 0), row);
  }
}

// A tap reducing M (extent 1 on kernel axis 1): per column slot, combine the 8 lanes of
// the warp holding that column (xor 4, 8, 16); lanes 0..3 then hold the warp's 16 * groups
// rows of the tile's columns and park them in `scratch` (4 warps x TileN floats); after a
// barrier each column's 4 warp partials are combined by one thread and folded into
// element (batch, 0, n) with one atomic. A closing barrier frees the scratch.
template <TapCombine C, int TileM, int TileN>
__device__ __forceinline__ void tap_commit_cols(
    const KernelArgs& args, const BufferArg& tap, const TileCoord& tile,
    const float (&part)[FragmentSlots<TileM, TileN>::kCols], float* scratch, int thread) {
  using Slots = FragmentSlots<TileM, TileN>;
  const int warp = thread / 32;
  const int lane = thread % 32;
#pragma unroll
  for (int c = 0; c < Slots::kCols; ++c) {
    const float col = warp_combine<C, 4, 16>(part[c]);
    if (lane < 4) scratch[warp * TileN + Slots::col_of(c, thread)] = col;
  }
  epilogue_barrier();
  for (int c = thread; c < TileN; c += kEpilogueThreads) {
    const float col = tap_merge<C>(tap_merge<C>(scratch[c], scratch[TileN + c]),
                                   tap_merge<C>(scratch[2 * TileN + c], scratch[3 * TileN + c]));
    const long long n = tile.n0 + c;
    if (n < args.n) tap_atomic<C>(tap_word(tap, tile.batch, 0, n), col);
  }
  epilogue_barrier();
}

// A tap reducing M and N: the whole warp (xor 1 .. 16), then the 4 warps through
// `scratch`, then thread 0 folds the tile into element (batch, 0, 0) with one atomic.
template <TapCombine C>
__device__ __forceinline__ void tap_commit_tile(const BufferArg& tap, const TileCoord& tile,
                                                float part, float* scratch, int thread) {
  const float warp_part = warp_combine<C, 1, 16>(part);
  if (thread % 32 == 0) scratch[thread / 32] = warp_part;
  epilogue_barrier();
  if (thread == 0) {
    const float all =
        tap_merge<C>(tap_merge<C>(scratch[0], scratch[1]), tap_merge<C>(scratch[2], scratch[3]));
    tap_atomic<C>(tap_word(tap, tile.batch, 0, 0), all);
  }
  epilogue_barrier();
}

// True in the one tile that finishes last; called by every tile after all of its tap
// atomics. The counter is the workspace's first 32-bit word, zeroed (seeded) before every
// launch; the last tile is the one that reads tiles - 1, the tile count of this call
// (batch x ceil(M / TileM) x ceil(N / TileN)), which equals gridDim.x * y * z for a grid of
// one CTA per tile and stays right for a persistent grid that visits every tile once.
//
// Memory order (the pattern of the CUDA Programming Guide's threadfence reduction):
//  1. every thread fences (__threadfence, fence.sc.gpu) after its tap atomics, then the
//     warpgroup meets at the barrier: all of the tile's atomics are ordered before
//  2. thread 0's counter increment (a device-scope atomic). The counter's modification
//     order puts every other tile's increment, each preceded by that tile's fenced atomics,
//     before the increment that returns tiles - 1.
//  3. That thread fences again before it publishes the verdict through shared memory and
//     the barrier, so every thread of the last tile reads the taps after all atomics of all
//     tiles; those reads are volatile (served by L2, never a stale L1 line).
template <int TileM, int TileN>
__device__ __forceinline__ bool last_tile_to_finish(const KernelArgs& args, float* scratch,
                                                    int thread) {
  __threadfence();
  epilogue_barrier();
  unsigned* verdict = reinterpret_cast<unsigned*>(scratch);
  if (thread == 0) {
    const unsigned long long tiles = static_cast<unsigned long long>(args.batch) *
                                     static_cast<unsigned long long>((args.m + TileM - 1) / TileM) *
                                     static_cast<unsigned long long>((args.n + TileN - 1) / TileN);
    const unsigned arrived = atomicAdd(static_cast<unsigned*>(args.workspace), 1u);
    __threadfence();
    *verdict = static_cast<unsigned long long>(arrived) + 1ull == tiles ? 1u : 0u;
  }
  epilogue_barrier();
  const bool last = *verdict != 0u;
  epilogue_barrier();  // the scratch word is free again (a persistent CTA's next tile)
  return last;
}

// norm2's closing step: every element of the tap (its call extents, its strides) becomes
// the square root of the sum of squares, spread over the 128 threads.
__device__ __forceinline__ void tap_sqrt(const BufferArg& tap, int thread) {
  const long long count = tap.shape[0] * tap.shape[1] * tap.shape[2];
  for (long long e = thread; e < count; e += kEpilogueThreads) {
    const long long n = e % tap.shape[2];
    const long long m = (e / tap.shape[2]) % tap.shape[1];
    const long long b = e / (tap.shape[2] * tap.shape[1]);
    volatile float* word = tap_word(tap, b, m, n);
    *word = __fsqrt_rn(*word);
  }
}

}  // namespace fusedgemm::kernels
