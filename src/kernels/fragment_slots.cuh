// Which rows and columns of the tile one consumer thread holds, numbered per thread: the
// "slots" the generated epilogue keeps its per-row and per-column partial reductions in.
// From the fragment layout of epilogue_contract.cuh: value v of 64-row group g sits at
//   row = g * 64 + warp * 16 + lane / 4 + 8 * h,  h = (v / 2) % 2
//   col = j * 8 + (lane % 4) * 2 + e,             j = v / 4, e = v % 2
// so a thread holds 2 rows per group (row slot g * 2 + h) and TileN / 4 columns (column
// slot j * 2 + e), and the 4 lanes of one quad (lane / 4 equal) share every row.
// Device code; no host headers (NVRTC).
#pragma once

#include "kernels/epilogue_contract.cuh"  // Fragment

namespace fusedgemm::kernels {

template <int TileM, int TileN>
struct FragmentSlots {
  using Frag = Fragment<TileM, TileN>;
  static_assert(TileM % 64 == 0, "FragmentSlots: TileM must be a multiple of 64 (wgmma M)");
  static_assert(TileN % 8 == 0 && TileN <= 256,
                "FragmentSlots: TileN must be a multiple of 8 up to 256 (wgmma N)");
  static constexpr int kRows = Frag::kGroups * 2;  // rows one thread holds
  static constexpr int kCols = TileN / 4;          // columns one thread holds

  __device__ static constexpr int row_slot(int index) {
    return (index / Frag::kPerGroup) * 2 + ((index % Frag::kPerGroup) / 2) % 2;
  }
  __device__ static constexpr int col_slot(int index) {
    return ((index % Frag::kPerGroup) / 4) * 2 + index % 2;
  }
  // The fragment index of (row slot, column slot): g * kPerGroup + j * 4 + h * 2 + e.
  __device__ static constexpr int index_of(int row, int col) {
    return (row / 2) * Frag::kPerGroup + (col / 2) * 4 + (row % 2) * 2 + col % 2;
  }
  // Tile row / column of a slot for `thread` (0..127 within the warpgroup).
  __device__ static int row_of(int row, int thread) {
    return (row / 2) * 64 + (thread / 32) * 16 + (thread % 32) / 4 + 8 * (row % 2);
  }
  __device__ static int col_of(int col, int thread) {
    return (col / 2) * 8 + (thread % 4) * 2 + col % 2;
  }
};

}  // namespace fusedgemm::kernels
