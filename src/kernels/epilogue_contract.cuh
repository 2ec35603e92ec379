// The contract between the mainloop (hand-written, src/kernels/) and the generated
// epilogue (src/codegen/): which accumulator element each thread holds, and the one
// function the generated code defines. Device code; no host headers (NVRTC).
//
// The mainloop runs one consumer warpgroup (128 threads) per CTA over a TILE_M x TILE_N
// tile, TILE_M a multiple of 64, with one fp32 accumulator array per GEMM in the wgmma
// m64nNk16 fragment layout (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts"
// for wgmma .m64nNk16 with an fp32 D): for 64-row group g (0 .. TILE_M/64-1), thread t of
// the warpgroup (warp w = t / 32, lane l = t % 32) holds TILE_N / 2 values; value v of the
// group sits at
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

// Where a CTA's tile sits in the problem.
struct TileCoord {
  long long batch;
  long long m0;  // first row of the tile
  long long n0;  // first column of the tile
};

}  // namespace fusedgemm::kernels

// The generated epilogue defines, for its graph's GEMM count G and the tile shape:
//
//   template <int TileM, int TileN>
//   __device__ void fusedgemm_epilogue(const fusedgemm::kernels::KernelArgs& args,
//                                      const fusedgemm::kernels::TileCoord& tile,
//                                      float (&acc)[G][Fragment<TileM, TileN>::kCount],
//                                      float* smem_scratch /* >= kEpilogueScratchBytes */);
//
// called by all 128 consumer threads after the last wgmma has completed. It reads aux
// buffers and writes outputs and taps through `args` (kernel axis order, stride 0 on
// broadcast and reduced axes), skipping rows >= args.m and columns >= args.n.
