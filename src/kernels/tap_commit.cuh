// The unit side of a tap (a unit: one consumer warpgroup's half of a CTA tile,
// epilogue_contract.cuh; "CTA" below means the unit). After the generated epilogue has
// folded each thread's values into per-thread partials (one per row slot, per column slot,
// or one for the tile), these functions reduce them inside the CTA and store the CTA's
// partial into its own slot of the workspace (no atomics on data); every CTA then arrives on
// its reduction group's counter, and the last CTA of a group folds the group's partials in a
// fixed order (bit-identical run to run), finishes them (norm2: square root) and stores the
// tap elements. All 128 threads of the consumer warpgroup call every function here (they
// contain warp shuffles and named barriers).
// Device code; no host headers (NVRTC).
//
// Reduction group: the CTAs whose tiles reduce into the same tap elements. Along each tile
// axis (batch, M tiles, N tiles) where the tap's extent is 1 the CTAs reduce together; the
// other axes tell groups apart. A [b, M, 1] tap: one group per (batch, M tile) of all N
// tiles; [1, 1, N]: one per N tile, of every batch and M tile; [1, 1, 1]: one group of all.
// A CTA's place in its group (`member`) numbers the reduced axes row-major; partials are
// combined in that order.
//
// Workspace (KernelArgs::taps[param], laid out by the host's recipe/workspace.h):
//   counters: one 64-bit word per group (kernels/epoch_counter.cuh: never zeroed)
//   partials: per group, per member, a slot of slot_floats floats: TileM (a row tap, by tile
//             row), TileN (a column tap, by tile column), 1 (a tile tap), or TileM x TileN
//             (a tap reducing only the batch, row-major)
#pragma once

#include "kernels/element_io.cuh"      // element
#include "kernels/epoch_counter.cuh"   // epoch_arrive
#include "kernels/fragment_slots.cuh"  // FragmentSlots
#include "kernels/kernel_args.h"       // KernelArgs, BufferArg, TapWorkspace
#include "kernels/ptx/barrier.cuh"     // bar_sync
#include "kernels/ptx/fence.cuh"       // fence_acq_rel_gpu
#include "kernels/ptx/global.cuh"      // ld_relaxed_gpu
#include "kernels/tap_combine.cuh"     // TapCombine, tap_merge, warp_combine

namespace fusedgemm::kernels {

// The epilogue runs on one consumer warpgroup per unit; its warpgroup-wide steps
// synchronize on that warpgroup's named barrier (epilogue_contract.cuh).
inline constexpr int kEpilogueThreads = 128;

__device__ __forceinline__ void epilogue_barrier() {
  ptx::bar_sync(epilogue_barrier_id(), kEpilogueThreads);
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

struct TapGroup {
  long long group;   // which group of the tap
  long long member;  // this CTA's place in it
  long long size;    // CTAs in the group
};

template <int TileM, int TileN>
__device__ __forceinline__ TapGroup tap_group(const KernelArgs& args, int param,
                                              const TileCoord& tile) {
  const BufferArg& tap = args.buffers[param];
  const long long tiles[3] = {args.batch, (args.m + TileM - 1) / TileM,
                              (args.n + TileN - 1) / TileN};
  const long long at[3] = {tile.batch, tile.m0 / TileM, tile.n0 / TileN};
  TapGroup g{0, 0, 1};
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) {
    if (tap.shape[axis] == 1) {
      g.member = g.member * tiles[axis] + at[axis];
      g.size *= tiles[axis];
    } else {
      g.group = g.group * tiles[axis] + at[axis];
    }
  }
  return g;
}

// The slot of member `member` of group g.
__device__ __forceinline__ float* tap_slot(const KernelArgs& args, int param, const TapGroup& g,
                                           long long member) {
  const TapWorkspace& w = args.taps[param];
  float* partials = reinterpret_cast<float*>(static_cast<char*>(args.workspace) + w.partials);
  return partials + (g.group * g.size + member) * w.slot_floats;
}

// This CTA's own slot.
template <int TileM, int TileN>
__device__ __forceinline__ float* tap_own_slot(const KernelArgs& args, int param,
                                               const TileCoord& tile) {
  const TapGroup g = tap_group<TileM, TileN>(args, param, tile);
  return tap_slot(args, param, g, g.member);
}

// The CTA reductions below leave each tap's partial in shared memory (`staged`: TileM
// floats for a row tap, TileN for a column tap, one for a tile tap), not in the workspace:
// while they run, every tap's per-thread partials are still live, and computing workspace
// addresses there costs the registers the kernel does not have (spills, measured with ptxas
// for taps.json at 128x128). tap_publish copies the staged partials out afterwards.

// A tap reducing N (extent 1 on kernel axis 2): a row belongs to one warp and its values
// to the 4 lanes of one quad. Per row slot: combine the quad (xor 1, 2), then lane 0 of the
// quad stages the row's partial at its tile row.
template <TapCombine C, int TileM, int TileN>
__device__ __forceinline__ void tap_commit_rows(
    const float (&part)[FragmentSlots<TileM, TileN>::kRows], float* staged, int thread) {
  using Slots = FragmentSlots<TileM, TileN>;
#pragma unroll
  for (int r = 0; r < Slots::kRows; ++r) {
    const float row = warp_combine<C, 1, 2>(part[r]);
    if (thread % 4 == 0) staged[Slots::row_of(r, thread)] = row;
  }
}

// A tap reducing M (extent 1 on kernel axis 1): per column slot, combine the 8 lanes of
// the warp holding that column (xor 4, 8, 16); lanes 0..3 then hold the warp's 16 * groups
// rows of the tile's columns and park them in `scratch` (4 warps x TileN floats); after a
// barrier each column's 4 warp partials are combined by one thread and staged at its tile
// column. A closing barrier frees the scratch.
template <TapCombine C, int TileM, int TileN>
__device__ __forceinline__ void tap_commit_cols(
    const float (&part)[FragmentSlots<TileM, TileN>::kCols], float* scratch, float* staged,
    int thread) {
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
    staged[c] = tap_merge<C>(tap_merge<C>(scratch[c], scratch[TileN + c]),
                             tap_merge<C>(scratch[2 * TileN + c], scratch[3 * TileN + c]));
  }
  epilogue_barrier();
}

// The warp (xor 1 .. 16), then the 4 warps through `scratch` in a fixed order.
template <TapCombine C>
__device__ __forceinline__ float cta_combine(float part, float* scratch, int thread) {
  const float warp_part = warp_combine<C, 1, 16>(part);
  if (thread % 32 == 0) scratch[thread / 32] = warp_part;
  epilogue_barrier();
  const float all =
      tap_merge<C>(tap_merge<C>(scratch[0], scratch[1]), tap_merge<C>(scratch[2], scratch[3]));
  epilogue_barrier();  // the scratch is free again
  return all;
}

// A tap reducing M and N: the CTA's one partial, staged by thread 0.
template <TapCombine C>
__device__ __forceinline__ void tap_commit_tile(float part, float* scratch, float* staged,
                                                int thread) {
  const float all = cta_combine<C>(part, scratch, thread);
  if (thread == 0) staged[0] = all;
}

// Copies a staged partial of `Floats` floats into this CTA's workspace slot. Called after
// a barrier that follows every commit (the staged values come from other threads).
template <int TileM, int TileN, int Floats>
__device__ __forceinline__ void tap_publish(const KernelArgs& args, int param,
                                            const TileCoord& tile, const float* staged,
                                            int thread) {
  float* slot = tap_own_slot<TileM, TileN>(args, param, tile);
  for (int i = thread; i < Floats; i += kEpilogueThreads) slot[i] = staged[i];
}

// Every CTA, after all of its taps' partials are stored: arrives on the group counter of
// each tap (kernel parameters Params; lane t of warp 0 arrives for the t-th, so the taps'
// round trips to L2 overlap) and returns a mask whose bit t is set when this CTA is the
// last of its group of tap t.
//
// Memory order (the CUDA Programming Guide's threadfence reduction):
//  1. every thread stores its partials, then the epilogue's threads meet at the barrier, and
//     each arriving lane fences (fence.acq_rel.gpu, cumulative over the stores the barrier
//     ordered before it): all of the CTA's partials are ordered before
//  2. the arrivals (device-scope atomics, kernels/epoch_counter.cuh). A counter's
//     modification order puts every other CTA's arrival, each preceded by that CTA's fenced
//     stores, before the arrival that completes the group.
//  3. Each arriving lane fences again; warp 0 meets (__ballot_sync after __syncwarp) and
//     lane 0 publishes the mask through shared memory and the barrier, so every thread of a
//     last CTA reads the partials after all of the group's stores; those reads are
//     ld.relaxed.gpu (L2, never a stale L1 line).
template <int TileM, int TileN, int... Params>
__device__ __forceinline__ unsigned tap_arrive_all(const KernelArgs& args, const TileCoord& tile,
                                                   float* scratch, int thread) {
  static_assert(sizeof...(Params) >= 1 && sizeof...(Params) <= 32,
                "tap_arrive_all: one lane of warp 0 per tap, 1 to 32 taps");
  epilogue_barrier();
  unsigned* verdict = reinterpret_cast<unsigned*>(scratch);
  if (thread < 32) {
    // This lane's tap: a fold over the pack, so no local array is indexed at run time.
    int param = -1;
    int t = 0;
    ((param = (t++ == thread) ? Params : param), ...);
    bool last = false;
    if (param >= 0) {
      const TapGroup g = tap_group<TileM, TileN>(args, param, tile);
      auto* counters = reinterpret_cast<unsigned long long*>(static_cast<char*>(args.workspace) +
                                                             args.taps[param].counters);
      ptx::fence_acq_rel_gpu();
      last = epoch_arrive(counters + g.group, args.epoch, g.size);
    }
    ptx::fence_acq_rel_gpu();
    __syncwarp();
    const unsigned mask = __ballot_sync(0xFFFFFFFFu, last);
    if (thread == 0) *verdict = mask;
  }
  epilogue_barrier();
  const unsigned last = *verdict;
  epilogue_barrier();  // the scratch word is free again
  return last;
}

// The group's partials at index `at` of every slot, folded in member order.
template <TapCombine C>
__device__ __forceinline__ float tap_fold_group(const KernelArgs& args, int param,
                                                const TapGroup& g, long long at) {
  const float* first = tap_slot(args, param, g, 0) + at;
  const long long stride = args.taps[param].slot_floats;
  float v = ptx::ld_relaxed_gpu(first);
  for (long long j = 1; j < g.size; ++j)
    v = tap_merge<C>(v, ptx::ld_relaxed_gpu(first + j * stride));
  return v;
}

template <bool Sqrt>
__device__ __forceinline__ void tap_store(const BufferArg& tap, long long b, long long m,
                                          long long n, float v) {
  *tap_word(tap, b, m, n) = Sqrt ? __fsqrt_rn(v) : v;
}

// The last CTA of a row tap's group: its tile's rows, each folded over the group's N tiles
// (and batches, for a tap of batch 1), one row per thread.
template <TapCombine C, bool Sqrt, int TileM, int TileN>
__device__ __forceinline__ void tap_finish_rows(const KernelArgs& args, int param,
                                                const TileCoord& tile, int thread) {
  const TapGroup g = tap_group<TileM, TileN>(args, param, tile);
  for (int r = thread; r < TileM && tile.m0 + r < args.m; r += kEpilogueThreads) {
    tap_store<Sqrt>(args.buffers[param], tile.batch, tile.m0 + r, 0,
                    tap_fold_group<C>(args, param, g, r));
  }
}

// The last CTA of a column tap's group: its tile's columns, one per thread.
template <TapCombine C, bool Sqrt, int TileM, int TileN>
__device__ __forceinline__ void tap_finish_cols(const KernelArgs& args, int param,
                                                const TileCoord& tile, int thread) {
  const TapGroup g = tap_group<TileM, TileN>(args, param, tile);
  for (int c = thread; c < TileN && tile.n0 + c < args.n; c += kEpilogueThreads) {
    tap_store<Sqrt>(args.buffers[param], tile.batch, 0, tile.n0 + c,
                    tap_fold_group<C>(args, param, g, c));
  }
}

// The last CTA of a tile tap's group (possibly every CTA of the grid): thread t folds
// members t, t + 128, ... in order, then the CTA combines the 128 results in its fixed
// order; thread 0 stores the element.
template <TapCombine C, bool Sqrt, int TileM, int TileN>
__device__ __forceinline__ void tap_finish_tile(const KernelArgs& args, int param,
                                                const TileCoord& tile, float identity,
                                                float* scratch, int thread) {
  const TapGroup g = tap_group<TileM, TileN>(args, param, tile);
  const float* first = tap_slot(args, param, g, 0);
  const long long stride = args.taps[param].slot_floats;
  float v = identity;
  for (long long j = thread; j < g.size; j += kEpilogueThreads) {
    v = tap_merge<C>(v, ptx::ld_relaxed_gpu(first + j * stride));
  }
  const float all = cta_combine<C>(v, scratch, thread);
  if (thread == 0) tap_store<Sqrt>(args.buffers[param], tile.batch, 0, 0, all);
}

// A tap reducing only the batch: each point's value goes to its place in the CTA's slot.
template <int TileN>
__device__ __forceinline__ void tap_store_point(float* slot, int row, int col, float v) {
  slot[row * TileN + col] = v;
}

// The last CTA of such a tap's group: every point of its tile, folded over the batches.
template <TapCombine C, bool Sqrt, int TileM, int TileN>
__device__ __forceinline__ void tap_finish_points(const KernelArgs& args, int param,
                                                  const TileCoord& tile, int thread) {
  const TapGroup g = tap_group<TileM, TileN>(args, param, tile);
  for (int e = thread; e < TileM * TileN; e += kEpilogueThreads) {
    const long long m = tile.m0 + e / TileN;
    const long long n = tile.n0 + e % TileN;
    if (m < args.m && n < args.n) {
      tap_store<Sqrt>(args.buffers[param], tile.batch, m, n, tap_fold_group<C>(args, param, g, e));
    }
  }
}

}  // namespace fusedgemm::kernels
