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
// (staged_row_bytes, kernels/sub_tile.cuh): 128 bytes, or 64 for a unit whose row is no whole
// number of 128 bytes (160 bf16 columns), which fills half its buffer.
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
#include "kernels/sub_tile.cuh"  // SwizzledSubTile

namespace fusedgemm::kernels {

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
  static constexpr int kRowBytes = staged_row_bytes(TileN * kBytes);
  static_assert(kRowBytes > 0, "StagedOutput: a unit row of whole 64-byte sub-tile rows");
  using Sub = SwizzledSubTile<TileN, kBytes, kRowBytes>;
  static constexpr int kSubCols = Sub::kSubCols;
  static constexpr int kSubValues = Sub::kSubValues;
  static constexpr int kSubTiles = Frag::kCount / kSubValues;  // of the unit

  const void* map;
  // This thread's byte of its first own buffer and of buffer 0 (borrowed)
  // (SwizzledSubTile::thread_offset), and its chunk bits (SwizzledSubTile::chunk_xor).
  unsigned base;
  unsigned borrowed_base;
  unsigned chunk_xor;
  int thread;
  int n0, m0, batch;  // the unit's first column and row, and its batch (TMA coordinates)

  __device__ StagedOutput(const KernelArgs& args, int slot, unsigned staging, unsigned borrowed,
                          const TileCoord& u, int t)
      : map(&args.tma[kMaxTmaDescriptors + slot]),
        base(staging + Sub::thread_offset(t)),
        borrowed_base(borrowed + Sub::thread_offset(t)),
        chunk_xor(Sub::chunk_xor(t)),
        thread(t),
        n0(static_cast<int>(u.n0)),
        m0(static_cast<int>(u.m0)),
        batch(static_cast<int>(u.batch)) {}

  // This thread's byte of buffer b (a constant of the unrolled element loop: no select
  // remains); thread 0's is the buffer's start.
  __device__ unsigned buffer_at(int b) const {
    return b < Borrowed ? borrowed_base + static_cast<unsigned>(b * kStagedBufferBytes)
                        : base + static_cast<unsigned>((b - Borrowed) * kStagedBufferBytes);
  }

  // Values i and i + 1 (i even: columns c, c + 1 of one row) into the staging buffer.
  __device__ void put(int i, float v0, float v1) const {
    const unsigned address = buffer_at((i / kSubValues) % kTotal) + Sub::pair_offset(i, chunk_xor);
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
      ptx::tma_store_3d(map, buffer_at(sub % kTotal), n0 + Sub::col0(sub), m0 + Sub::row0(sub),
                        batch);
      ptx::bulk_commit_group();
      if (kTotal == 1) ptx::bulk_wait_group_read<0>();
    }
    if (kTotal == 1) ptx::bar_sync(epilogue_barrier_id(), 128);
  }
};

}  // namespace fusedgemm::kernels
