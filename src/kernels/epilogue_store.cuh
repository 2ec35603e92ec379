// The TMA-store path of a dense output: the generated epilogue puts each value pair into a
// 128B-swizzled staging buffer in shared memory, and at the end of every sub-tile (64 rows,
// one 128-byte row of columns) one thread stores the sub-tile with a TMA bulk copy. With T >= 2
// buffers the warpgroup computes the next sub-tiles into the others meanwhile (a sub-tile waits
// only for the store T - 1 before it; with as many buffers as the unit has sub-tiles, for none
// of its unit's); with one (a ping-pong tile whose ring has no room for two) it waits for the
// copy to read it. Whole 128-byte lines reach L2, where direct stores from the fragment write 16
// bytes of a row per quad (2x the L2 store sectors of cuBLASLt's TMA stores at 4096^3: ncu on the
// H200, 2026-12-03). Device code; no host headers (NVRTC).
//
// Staging of one stored output, per consumer warpgroup, T = Borrowed + Buffers buffers of
// kStagedBufferBytes (kernels/kernel_args.h), each at a 1024-byte aligned address:
//   buffers 0 .. Borrowed - 1 borrowed from the ring stage the unit's last K step read
//     (kernels/gemm_sm90.cuh holds that stage back from the producer until these stores have
//     read it): a store waits less for an earlier one's read without a stage less; first,
//     so that their stores are read while the unit's last sub-tiles are still computed and
//     the stage goes back early (recipe::stores_after_borrowed);
//   buffers Borrowed .. T - 1 (1 to kMaxStagedBuffers) its own, in the kernel's staging area.
// Each is a sub-tile of 64 rows x kRowBytes in TMA's swizzle of that span
// (staged_row_bytes): 128 bytes, the 16-byte chunk q of row r at chunk q ^ (r % 8); 64 bytes
// (a unit whose row is no whole number of 128 bytes: 160 bf16 columns), chunk q ^ (r / 2 % 4).
// Either way the 8 rows a warp writes at once fall in 8 distinct 16-byte slots of 128 bytes
// (no bank conflicts); a 64-byte sub-tile fills half its buffer.
// The descriptor (KernelArgs::tma[kMaxTmaDescriptors + k], codegen/tma_plan.h) has the box
// {kSubCols, 64, 1} over axes (N, M, batch) with the same swizzle.
#pragma once

#include "kernels/element_io.cuh"         // Elem, encode
#include "kernels/epilogue_access.cuh"    // kElemBytes
#include "kernels/epilogue_contract.cuh"  // Fragment, TileCoord, epilogue_barrier_id
#include "kernels/fragment_slots.cuh"     // FragmentSlots
#include "kernels/kernel_args.h"          // KernelArgs, kStaged*
#include "kernels/ptx/barrier.cuh"
#include "kernels/ptx/fence.cuh"
#include "kernels/ptx/smem.cuh"
#include "kernels/ptx/tma.cuh"

namespace fusedgemm::kernels {

// Whether every stored output of this launch goes through TMA (KernelArgs::tma_stores).
__device__ __forceinline__ bool tma_stores_on(const KernelArgs& args, int count) {
  const unsigned all = (1u << count) - 1u;
  return (args.tma_stores & all) == all;
}

// Before a unit's first sub-tile (two buffers or more): the previous unit's stores have read
// their buffers.
__device__ __forceinline__ void staged_outputs_free(int thread) {
  if (thread == 0) ptx::bulk_wait_group_read<0>();
  ptx::bar_sync(epilogue_barrier_id(), 128);
}

template <Elem E, int TileM, int TileN, int Buffers, int Borrowed>
struct StagedOutput {
  static_assert(Buffers >= 1 && Buffers <= kMaxStagedBuffers,
                "StagedOutput: 1 to kMaxStagedBuffers staging buffers");
  static_assert(Borrowed == 0 || Buffers >= 2, "StagedOutput: buffers borrowed beside two or more");
  static constexpr int kOutputBytes = Buffers * kStagedBufferBytes;  // own staging per output
  static constexpr int kTotal = Buffers + Borrowed;
  using Frag = Fragment<TileM, TileN>;
  static constexpr int kBytes = kElemBytes<E>;
  static_assert(kBytes == 2 || kBytes == 4, "StagedOutput: 16- and 32-bit outputs only");
  static constexpr int kRowBytes = staged_row_bytes(TileN * kBytes);
  static_assert(kRowBytes > 0, "StagedOutput: a unit row of whole 64-byte sub-tile rows");
  static constexpr int kSubCols = kRowBytes / kBytes;
  // Fragment values of a thread per sub-tile: the group's 8-column chunks j of the sub-tile
  // hold 4 values each, so sub-tile s is values [s * kSubValues, (s + 1) * kSubValues).
  static constexpr int kSubValues = kSubCols / 2;
  static_assert(Frag::kPerGroup % kSubValues == 0, "StagedOutput: TileN a multiple of kSubCols");
  static constexpr int kSubTiles = Frag::kCount / kSubValues;  // of the unit

  const void* map;
  // This thread's byte of its first own buffer and of buffer 0 (borrowed) at (its row
  // of the group, h = 0; its first column) short of the column's 16-byte chunk, and the chunk
  // bits that XOR the chunk of a value: the swizzle of its rows (row % 8 = lane / 4 for every
  // row it holds) and, for 32-bit values, which half of an even chunk its first column is in
  // (chunk = 2j + that half).
  unsigned base;
  unsigned borrowed_base;
  unsigned chunk_xor;
  int thread;
  int n0, m0, batch;  // the unit's first column and row, and its batch (TMA coordinates)

  __device__ StagedOutput(const KernelArgs& args, int slot, unsigned staging, unsigned borrowed,
                          const TileCoord& u, int t)
      : map(&args.tma[kMaxTmaDescriptors + slot]),
        base(staging + thread_offset(t)),
        borrowed_base(borrowed + thread_offset(t)),
        chunk_xor(static_cast<unsigned>(((t % 4) * 2 * kBytes) / 16 ^ row_swizzle(t))),
        thread(t),
        n0(static_cast<int>(u.n0)),
        m0(static_cast<int>(u.m0)),
        batch(static_cast<int>(u.batch)) {}

  __device__ static unsigned thread_offset(int t) {
    return static_cast<unsigned>(((t / 32) * 16 + (t % 32) / 4) * kRowBytes +
                                 ((t % 4) * 2 * kBytes) % 16);
  }

  // The swizzle's chunk bits of every row this thread holds (row % 8 = lane / 4 for each).
  __device__ static int row_swizzle(int t) {
    return kRowBytes == 128 ? (t % 32) / 4 : (t % 32) / 8;
  }

  // This thread's byte of buffer b (a constant of the unrolled element loop: no select
  // remains); thread 0's is the buffer's start.
  __device__ unsigned buffer_at(int b) const {
    return b < Borrowed ? borrowed_base + static_cast<unsigned>(b * kStagedBufferBytes)
                        : base + static_cast<unsigned>((b - Borrowed) * kStagedBufferBytes);
  }

  // Values i and i + 1 (i even: columns c, c + 1 of one row) into the staging buffer.
  __device__ void put(int i, float v0, float v1) const {
    const int v = i % Frag::kPerGroup;
    const int buffer = (i / kSubValues) % kTotal;
    const int h = (v / 2) % 2;  // the row 8 below
    // The 16-byte chunk of the value's 8-column group j in the sub-tile: even for 32-bit
    // values, so the thread's half adds by XOR.
    const unsigned chunk = static_cast<unsigned>((((v / 4) * 8) % kSubCols) * kBytes / 16);
    const unsigned address =
        buffer_at(buffer) + static_cast<unsigned>(h * 8 * kRowBytes) + ((chunk ^ chunk_xor) << 4);
    if constexpr (kBytes == 4) {
      ptx::st_shared_v2_b32(address, encode<E>(v0), encode<E>(v1));
    } else {
      ptx::st_shared_b32(address, encode<E>(v0) | (encode<E>(v1) << 16));
    }
  }

  // After value i: where it ends a sub-tile, the warpgroup's writes go to the async proxy and
  // one thread stores the sub-tile (columns past N and rows past M are clipped by TMA). With
  // T >= 2 buffers that thread first waits until the store of sub-tile - (T - 1) has read the
  // buffer the next sub-tile fills (at most T - 2 newer stores may still read; a second staged
  // output's stores count among them, which only waits longer), unless no sub-tile follows in
  // the unit (the next unit waits for all, staged_outputs_free); with one, for this store,
  // before anyone writes again. Every thread of the warpgroup calls it with the same i.
  __device__ void flush(int i) const {
    if ((i + 1) % kSubValues != 0) return;
    const int sub = i / kSubValues;
    ptx::fence_proxy_async_shared();
    if constexpr (kTotal >= 2) {
      if (thread == 0 && sub + 1 < kSubTiles) ptx::bulk_wait_group_read<kTotal - 2>();
    }
    ptx::bar_sync(epilogue_barrier_id(), 128);
    if (thread == 0) {
      const int g = i / Frag::kPerGroup;
      const int col = ((i % Frag::kPerGroup) / kSubValues) * kSubCols;
      ptx::tma_store_3d(map, buffer_at(sub % kTotal), n0 + col, m0 + g * 64, batch);
      ptx::bulk_commit_group();
      if (kTotal == 1) ptx::bulk_wait_group_read<0>();
    }
    if (kTotal == 1) ptx::bar_sync(epilogue_barrier_id(), 128);
  }
};

}  // namespace fusedgemm::kernels
