// The contract between the mainloop (hand-written, src/kernels/) and the generated
// epilogue (src/codegen/): which accumulator element each thread holds, and the one
// function the generated code defines. Device code; no host headers (NVRTC).
//
// The epilogue runs once per consumer warpgroup (128 threads) and CTA tile, over that
// warpgroup's half of the CTA tile: its *unit*, TILE_M x TILE_N in the epilogue's terms
// (TILE_M a multiple of 64). Units tile the problem in a regular grid (unit (i, j) starts at
// row i * TILE_M, column j * TILE_N), so a reduction tap groups units exactly as it would
// group CTAs whose tile is the unit.
// Each GEMM's fp32 accumulators are in the wgmma m64nNk16 fragment layout (PTX ISA,
// "Register Fragments and Shared Memory Matrix Layouts" for wgmma .m64nNk16 with an fp32 D):
// for 64-row group g (0 .. TILE_M/64-1), thread t of the warpgroup (warp w = t / 32, lane
// l = t % 32) holds TILE_N / 2 values; value v of the group sits at
//   row = g * 64 + w * 16 + l / 4 + 8 * ((v / 2) % 2)
//   col = (l % 4) * 2 + (v % 2) + 8 * (v / 4)
// and the thread's array index is g * (TILE_N / 2) + v.
#pragma once

#include "kernels/kernel_args.h"

namespace fusedgemm::kernels {

template <int TileM, int TileN>
struct Fragment {
  static constexpr int kGroups = TileM / 64;
  static constexpr int kPerGroup = TileN / 2;
  static constexpr int kCount = kGroups * kPerGroup;  // floats per thread per GEMM

  __device__ static int row(int index, int thread) {
    const int g = index / kPerGroup;
    const int v = index % kPerGroup;
    const int warp = thread / 32;
    const int lane = thread % 32;
    return g * 64 + warp * 16 + lane / 4 + 8 * ((v / 2) % 2);
  }
  __device__ static int col(int index, int thread) {
    const int v = index % kPerGroup;
    const int lane = thread % 32;
    return (lane % 4) * 2 + (v % 2) + 8 * (v / 4);
  }
};

// Where an epilogue unit (or a CTA's tile) sits in the problem.
struct TileCoord {
  long long batch;
  long long m0;  // first row
  long long n0;  // first column
};

// The warpgroup's named barrier (kernels/ptx/barrier.cuh): the epilogue's steps that need
// the whole warpgroup synchronize on it, never on __syncthreads (the other warpgroups are
// elsewhere). Warpgroup w of the CTA (w >= 1: the producer never runs an epilogue) uses
// barrier w; 0 is __syncthreads.
__device__ __forceinline__ int epilogue_barrier_id() {
  return static_cast<int>(threadIdx.x / 128);
}

// Whether every epilogue tile of this launch goes through TMA (KernelArgs::tma_tiles): the
// bits of the kernel's stored outputs and loaded aux, `mask`, all set.
__device__ __forceinline__ bool tma_tiles_on(const KernelArgs& args, unsigned mask) {
  return (args.tma_tiles & mask) == mask;
}

}  // namespace fusedgemm::kernels

// The generated epilogue defines, for its graph's GEMM count G:
//
//   template <int TileM, int TileN>   // the unit's extents
//   __device__ void fusedgemm_epilogue(const fusedgemm::kernels::KernelArgs& args,
//                                      const fusedgemm::kernels::TileCoord& unit,
//                                      float (&acc)[G][Fragment<TileM, TileN>::kCount],
//                                      float* smem_scratch /* >= kEpilogueScratchBytes */,
//                                      unsigned smem_staging, unsigned smem_borrowed,
//                                      unsigned smem_aux, unsigned& aux_parity);
//   template <int TileM, int TileN>
//   __device__ void fusedgemm_epilogue_prefetch(const KernelArgs& args, const TileCoord& unit,
//                                               unsigned smem_aux, unsigned aux_parity);
//   template <int TileM, int TileN>
//   __device__ void fusedgemm_epilogue_skip(const KernelArgs& args, unsigned smem_aux,
//                                           unsigned& aux_parity);
//
// fusedgemm_epilogue is called by the 128 threads of one consumer warpgroup after its last
// wgmma of the tile has completed, with `unit` the start of its unit, a scratch of its own and
// the shared address of its staging for TMA-stored outputs (kStagedOutputs x kStagedBuffers x
// kStagedBufferBytes, 1024-aligned; kernels/epilogue_store.cuh), of kBorrowedBuffers more for
// this unit in a ring stage (kernels/gemm_sm90_config.cuh), and of its loaded aux buffers and
// their barriers (kernels/epilogue_aux_tiles.cuh) with the word of their parities. It reads aux
// buffers and writes outputs and taps through `args` (kernel axis order, stride 0 on broadcast
// and reduced axes), skipping rows >= args.m and columns >= args.n. Before the unit's
// mainloop the same threads call fusedgemm_epilogue_prefetch for every unit inside the
// problem, and fusedgemm_epilogue_skip for such a unit whose epilogue does not run (a split
// K's partial); a kernel without loaded aux makes both empty.
