// The shared-memory path of a full aux input (one value per output element): one thread of the
// consumer warpgroup loads the unit's aux sub-tile by sub-tile into a few buffers of shared
// memory with TMA, and the generated epilogue reads each thread's value pairs from there.
// Where a call's layout is one TMA cannot read, the warpgroup copies each sub-tile in itself
// (copy), and the epilogue reads it the same way: a direct path holding a row address per
// aux and row spilled 1.8 KB with six aux at 128-row units.
// Element by element from global memory a 16-bit aux ran at a third of a streaming kernel's
// bandwidth: six of them made the fused kernel 1.5-2.4x slower than cuBLASLt's GEMM plus an
// add kernel (docs/PERF.md run 47). Device code; no host headers (NVRTC).
//
// Per consumer warpgroup and loaded aux k: Buffers buffers of kAuxBufferBytes (a sub-tile of
// 64 rows x kAuxRowBytes in TMA's 64-byte swizzle, kernels/sub_tile.cuh), sub-tile s of a unit
// in buffer s % Buffers, each with a "full" mbarrier (1 arrival, the issuing thread's
// arrive.expect_tx, plus the box's bytes). The order of one unit:
//   prefetch (before the unit's mainloop, so the first loads overlap its MMAs): thread 0
//     issues sub-tiles 0 .. Buffers - 1;
//   the element loop: before a sub-tile's first value every thread waits for its buffer;
//     after its last, the warpgroup synchronizes (every thread has read it) and thread 0
//     issues sub-tile s + Buffers into it, if the unit has one;
//   a unit whose epilogue does not run (split K, not the last split) waits for its
//     prefetched sub-tiles (skip), so every issued load completes before its buffer is reused.
// Without TMA only the element loop's steps remain: each sub-tile copied at its first value,
// the warpgroup synchronized after it and after its last.
// A buffer's parity runs on across units in one word per consumer (aux_parity in
// kernels/gemm_sm90.cuh's mma_loop): bit k * Buffers + b, the parity of buffer b of aux k's
// next fill.
// The descriptor (KernelArgs::tma[kTmaAuxSlot + k], codegen/tma_plan.h) has the box
// {kSubCols, 64, 1} over axes (N, M, batch) with the 64-byte swizzle; out-of-bounds elements
// arrive as zeros, as the direct path reads them.
#pragma once

#include "kernels/element_io.cuh"         // Elem, decode
#include "kernels/epilogue_access.cuh"    // kElemBytes
#include "kernels/epilogue_contract.cuh"  // Fragment, TileCoord, epilogue_barrier_id
#include "kernels/kernel_args.h"          // KernelArgs, kAux*
#include "kernels/ptx/barrier.cuh"
#include "kernels/ptx/mbarrier.cuh"
#include "kernels/ptx/smem.cuh"
#include "kernels/ptx/tma.cuh"
#include "kernels/sub_tile.cuh"  // SwizzledSubTile

namespace fusedgemm::kernels {

template <Elem E, int TileM, int TileN, int Buffers>
struct AuxTiles {
  static_assert(Buffers >= 1 && Buffers <= kMaxAuxBuffers, "AuxTiles: 1 to kMaxAuxBuffers buffers");
  static constexpr int kBytes = kElemBytes<E>;
  static_assert(kBytes == 2 || kBytes == 4, "AuxTiles: 16- and 32-bit aux only");
  using Frag = Fragment<TileM, TileN>;
  using Sub = SwizzledSubTile<TileN, kBytes, kAuxRowBytes>;
  static constexpr int kSubValues = Sub::kSubValues;
  static constexpr int kSubTiles = Frag::kCount / kSubValues;  // of the unit
  static_assert(kSubTiles >= Buffers, "AuxTiles: no more buffers than a unit has sub-tiles");
  // The fills of buffer b in one unit, and the parity bits a unit flips (buffers filled an
  // odd number of times) or a skipped unit flips (each buffer once).
  __device__ static constexpr int fills(int b) { return (kSubTiles - b + Buffers - 1) / Buffers; }
  __device__ static constexpr unsigned run_flips() {
    unsigned bits = 0;
    for (int b = 0; b < Buffers; ++b) bits |= static_cast<unsigned>(fills(b) % 2) << b;
    return bits;
  }
  static constexpr unsigned kAllBuffers = (1u << Buffers) - 1u;

  const void* map;
  unsigned buffers;   // buffer 0's shared address
  unsigned barriers;  // buffer 0's full barrier
  unsigned thread_base;
  unsigned chunk_xor;
  unsigned parity;  // bit b: the parity of buffer b's first fill of this unit
  int n0, m0, batch;

  // Aux k (kernel parameter `param`) of the unit at `unit`, its buffers from `smem` and its
  // barriers from `bars` (kernels/gemm_sm90_config.cuh), `parities` the consumer's word.
  __device__ AuxTiles(const KernelArgs& args, int k, int param, unsigned smem, unsigned bars,
                      const TileCoord& unit, int thread, unsigned parities)
      : map(&args.tma[kTmaAuxSlot + k]),
        buffers(smem + static_cast<unsigned>(k * Buffers * kAuxBufferBytes)),
        barriers(bars + static_cast<unsigned>(k * Buffers * 8)),
        thread_base(Sub::thread_offset(thread)),
        chunk_xor(Sub::chunk_xor(thread)),
        parity((parities >> (k * Buffers)) & kAllBuffers),
        n0(static_cast<int>(unit.n0)),
        m0(static_cast<int>(unit.m0)),
        // A broadcast batch (extent 1) is read at batch 0 by every batch's units.
        batch(args.buffers[param].shape[0] == 1 ? 0 : static_cast<int>(unit.batch)) {}

  // Thread 0: sub-tile s into buffer s % Buffers.
  __device__ void issue(int s) const {
    const unsigned b = static_cast<unsigned>(s % Buffers);
    const unsigned bar = barriers + 8u * b;
    ptx::mbarrier_arrive_expect_tx(bar, kAuxBufferBytes);
    ptx::tma_load_3d(buffers + b * kAuxBufferBytes, map, bar, n0 + Sub::col0(s), m0 + Sub::row0(s),
                     batch);
  }
  // Thread 0, before the unit's mainloop: the first sub-tiles, one per buffer.
  __device__ void prefetch() const {
#pragma unroll
    for (int s = 0; s < Buffers; ++s) issue(s);
  }
  // Where value i starts a sub-tile: through TMA, wait until its buffer has landed; else
  // every thread copies its share of the sub-tile into the buffer (the call's layout is one
  // TMA cannot read), and the warpgroup waits for all.
  template <bool kTma>
  __device__ void wait(int i, const KernelArgs& args, int param, int thread) const {
    if (i % kSubValues != 0) return;
    const int s = i / kSubValues;
    const int b = s % Buffers;
    if constexpr (kTma) {
      ptx::mbarrier_wait_parity(barriers + 8u * static_cast<unsigned>(b),
                                ((parity >> b) ^ static_cast<unsigned>(s / Buffers)) & 1u);
    } else {
      copy(s, args.buffers[param], args, thread);
      ptx::bar_sync(epilogue_barrier_id(), 128);
    }
  }
  // Sub-tile s from global memory into buffer s % Buffers, in TMA's layout and swizzle (zero
  // outside the problem, as TMA fills it): consecutive threads take consecutive columns.
  __device__ void copy(int s, const BufferArg& a, const KernelArgs& args, int thread) const {
    constexpr int kCols = Sub::kSubCols;
    const unsigned buffer = buffers + static_cast<unsigned>((s % Buffers) * kAuxBufferBytes);
    const char* base = static_cast<const char*>(a.data) + batch * a.stride[0] * kBytes;
#pragma unroll 4
    for (int e = thread; e < kStagedRows * kCols; e += 128) {
      const int row = e / kCols;
      const int col = e % kCols;
      const long long m = m0 + Sub::row0(s) + row;
      const long long n = n0 + Sub::col0(s) + col;
      const unsigned code = m < args.m && n < args.n
                                ? ldg_code<E>(base + (m * a.stride[1] + n * a.stride[2]) * kBytes)
                                : 0u;
      const int byte = col * kBytes;
      const unsigned at = buffer + static_cast<unsigned>(row * kAuxRowBytes) +
                          (static_cast<unsigned>((byte / 16) ^ ((row / 2) % 4)) << 4) +
                          static_cast<unsigned>(byte % 16);
      if constexpr (kBytes == 4) {
        ptx::st_shared_b32(at, code);
      } else {
        ptx::st_shared_b16(at, static_cast<unsigned short>(code));
      }
    }
  }
  // Values i and i + 1 (i even; columns c, c + 1 of one row), zero outside the problem.
  __device__ void pair(int i, float& v0, float& v1) const {
    const unsigned address = buffers +
                             static_cast<unsigned>(((i / kSubValues) % Buffers) * kAuxBufferBytes) +
                             thread_base + Sub::pair_offset(i, chunk_xor);
    if constexpr (kBytes == 4) {
      unsigned lo, hi;
      ptx::ld_shared_v2_b32(address, lo, hi);
      v0 = decode<E>(lo);
      v1 = decode<E>(hi);
    } else {
      const unsigned word = ptx::ld_shared_b32(address);
      v0 = decode<E>(word & 0xffffu);
      v1 = decode<E>(word >> 16);
    }
  }
  __device__ static constexpr bool ends_sub(int i) {
    return (i + 1) % kSubValues == 0;
  }
  // Thread 0, after every thread has read value i: where it ends sub-tile s, sub-tile s +
  // Buffers into its buffer, if the unit has one.
  __device__ void refill(int i) const {
    if (!ends_sub(i)) return;
    const int s = i / kSubValues;
    if (s + Buffers < kSubTiles) issue(s + Buffers);
  }
  // Every thread of a skipped unit: aux k's prefetched sub-tiles (one per buffer) have landed;
  // `bars` and `parities` as for the constructor. The unit then flips skip_flips(k).
  __device__ static void drain(unsigned bars, int k, unsigned parities) {
#pragma unroll
    for (int b = 0; b < Buffers; ++b) {
      const unsigned bar = bars + static_cast<unsigned>((k * Buffers + b) * 8);
      ptx::mbarrier_wait_parity(bar, (parities >> (k * Buffers + b)) & 1u);
    }
  }
  __device__ static constexpr unsigned skip_flips(int k) {
    return kAllBuffers << (k * Buffers);
  }
};

// After value i of every loaded aux: where it ends a sub-tile of any, the warpgroup has read
// those buffers, and through TMA thread 0 refills them. Every thread calls it with the same i.
template <bool kTma, class... Tiles>
__device__ __forceinline__ void aux_tiles_release(int i, int thread, const Tiles&... tiles) {
  if (!(Tiles::ends_sub(i) || ...)) return;
  ptx::bar_sync(epilogue_barrier_id(), 128);
  if constexpr (kTma) {
    if (thread == 0) (tiles.refill(i), ...);
  }
}

}  // namespace fusedgemm::kernels
