// Split K: the work units of one epilogue unit (a consumer warpgroup's part of a CTA tile)
// that each computed a share of K (kernels/tile_scheduler.cuh) meet here. Each stores its
// accumulators in its own slot of the workspace and arrives on the unit's counter
// (kernels/epoch_counter.cuh); the last to arrive adds every slot, its own too, in split
// order — so the sum is the same whichever split finishes last — and then runs the epilogue
// alone. No unit waits for another. Of two splits the last adds the other's slot to its own
// accumulators: s0 + s1 and s1 + s0 are the same float, and it reads half the bytes.
// Device code; no host headers (NVRTC).
//
// Workspace (KernelArgs::split, laid out by the host's recipe/workspace.h), per epilogue
// unit of the split tiles — unit (v, r, c) of the v-th split cluster tile (the scheduler's
// tile split_from + v), CTA rank r, consumer c (0 where a consumer takes whole tiles) at
// index (v * ClusterCtas + r) * UnitsPerTile + c:
//   counters: one 64-bit word per unit
//   partials: per unit, `splits` slots of Gemms x UnitM x UnitN floats; in a slot thread t
//             keeps its accumulators i .. i + 3 (two rows, two columns of the wgmma fragment)
//             as the float4 at (g * kCount / 4 + i / 4) * 128 + t, so a warp's stores and
//             loads are whole 512-byte lines
//
// Rows past M are neither stored nor read (the epilogue skips them): at M = 16 a 64-row
// unit's warps 1-3 hold none, and the last split's reads — on the critical path, after
// every split has finished — shrink fourfold.
#pragma once

#include "kernels/epilogue_contract.cuh"  // Fragment, TileCoord, epilogue_barrier_id
#include "kernels/epoch_counter.cuh"      // epoch_arrive
#include "kernels/kernel_args.h"          // KernelArgs
#include "kernels/ptx/barrier.cuh"        // bar_sync, bar_sync_or
#include "kernels/ptx/fence.cuh"          // fence_acq_rel_gpu
#include "kernels/ptx/global.cuh"         // ld_relaxed_gpu

namespace fusedgemm::kernels {

// One consumer warpgroup runs this; all 128 threads call it.
inline constexpr int kSplitThreads = 128;

template <int Gemms, int UnitM, int UnitN>
struct SplitK {
  using Frag = Fragment<UnitM, UnitN>;
  static constexpr int kQuads = Frag::kCount / 4;             // float4s per thread per GEMM
  static constexpr int kQuadsPerGroup = Frag::kPerGroup / 4;  // ... per 64-row group
  static constexpr long long kSlotQuads = static_cast<long long>(Gemms) * kQuads * kSplitThreads;
  static_assert(Frag::kCount % 4 == 0, "a fragment is whole quads of 4 accumulators");

  __device__ static float4* slot(const KernelArgs& args, long long unit, long long split) {
    char* base = static_cast<char*>(args.workspace) + args.split.partials;
    return reinterpret_cast<float4*>(base) + (unit * args.split.splits + split) * kSlotQuads;
  }

  // Quad q holds rows r and r + 8 of its 64-row group, r = the thread's first row in a group:
  // live where r < M, `rows_left` being M less the unit's first row less r of group 0.
  __device__ static bool live(int q, long long rows_left) {
    return (q / kQuadsPerGroup) * 64 < rows_left;
  }

  // acc = (First) or += the live quads of one slot, at `from` (this thread's first float4).
  template <bool First>
  __device__ static void fold(const float4* from, float (&acc)[Gemms][Frag::kCount],
                              long long rows_left) {
#pragma unroll
    for (int g = 0; g < Gemms; ++g) {
#pragma unroll
      for (int q = 0; q < kQuads; ++q) {
        if (!live(q, rows_left)) continue;
        const float4 v = ptx::ld_relaxed_gpu(from + (g * kQuads + q) * kSplitThreads);
        float* a = &acc[g][4 * q];
        if constexpr (First) {
          a[0] = v.x;
          a[1] = v.y;
          a[2] = v.z;
          a[3] = v.w;
        } else {
          a[0] += v.x;
          a[1] += v.y;
          a[2] += v.z;
          a[3] += v.w;
        }
      }
    }
  }

  // Stores this split's accumulators, arrives, and, for the unit's last split, leaves the
  // sum over every split in `acc`: true then (run the epilogue), false for the others. `id`
  // is the unit's index among the split tiles' units (the header's), `unit` where it starts.
  __device__ static bool reduce(const KernelArgs& args, long long id, const TileCoord& unit,
                                int split, float (&acc)[Gemms][Frag::kCount], int thread) {
    // Only live quads are stored and read: a decode-size M moves a quarter of a 64-row unit.
    const long long rows_left = args.m - unit.m0 - ((thread / 32) * 16 + (thread % 32) / 4);
    float4* own = slot(args, id, split) + thread;
#pragma unroll
    for (int g = 0; g < Gemms; ++g) {
#pragma unroll
      for (int q = 0; q < kQuads; ++q) {
        if (!live(q, rows_left)) continue;
        own[(g * kQuads + q) * kSplitThreads] =
            make_float4(acc[g][4 * q], acc[g][4 * q + 1], acc[g][4 * q + 2], acc[g][4 * q + 3]);
      }
    }
    // Memory order as tap_arrive_all's: every thread's stores, the barrier, then thread 0's
    // release fence before the arrival; after a last arrival its acquire fence before the
    // barrier that lets the warpgroup read the slots (ld.relaxed.gpu: from L2, never a stale
    // L1 line).
    ptx::bar_sync(epilogue_barrier_id(), kSplitThreads);
    bool last = false;
    if (thread == 0) {
      auto* counters = reinterpret_cast<unsigned long long*>(static_cast<char*>(args.workspace) +
                                                             args.split.counters);
      ptx::fence_acq_rel_gpu();
      last = epoch_arrive(counters + id, args.epoch, args.split.splits);
      ptx::fence_acq_rel_gpu();
    }
    if (!ptx::bar_sync_or(epilogue_barrier_id(), kSplitThreads, last)) return false;
    if (args.split.splits == 2) {
      fold<false>(slot(args, id, 1 - split) + thread, acc, rows_left);
      return true;
    }
    // Every slot, this split's too, in split order: the same sum whichever split is last.
    const float4* from = slot(args, id, 0) + thread;
    const float4* const end = from + args.split.splits * kSlotQuads;
    fold<true>(from, acc, rows_left);
    for (from += kSlotQuads; from != end; from += kSlotQuads) fold<false>(from, acc, rows_left);
    return true;
  }
};

}  // namespace fusedgemm::kernels
