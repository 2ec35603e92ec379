// Where a consumer thread's fragment values sit in a sub-tile of its unit held in shared memory
// in TMA's swizzle: 64 rows (one wgmma row group) x RowBytes (128 or 64) of Bytes-wide
// elements. A staged output's values are written there (kernels/epilogue_store.cuh), a loaded
// aux's read from there (kernels/epilogue_aux_tiles.cuh), a pair of a row's neighbouring
// columns at a time. Sub-tile s of a unit holds the thread's values [s * kSubValues, (s + 1) *
// kSubValues): row group s / kSubsPerGroup, columns from (s % kSubsPerGroup) * kSubCols.
// Device code; no host headers (NVRTC).
//
// Swizzle: 128-byte rows, the 16-byte chunk q of row r at chunk q ^ (r % 8); 64-byte rows,
// chunk q ^ (r / 2 % 4). Either way the 8 rows a warp touches at once fall in 8 distinct
// 16-byte slots of 128 bytes (no bank conflicts).
#pragma once

namespace fusedgemm::kernels {

template <int TileN, int Bytes, int RowBytes>
struct SwizzledSubTile {
  static_assert(RowBytes == 128 || RowBytes == 64, "SwizzledSubTile: rows of 128 or 64 bytes");
  static_assert(Bytes == 2 || Bytes == 4, "SwizzledSubTile: 16- and 32-bit elements only");
  static constexpr int kSubCols = RowBytes / Bytes;
  static constexpr int kSubValues = kSubCols / 2;  // a thread's values per sub-tile
  static constexpr int kPerGroup = TileN / 2;      // a thread's values per 64-row group
  static_assert(kPerGroup % kSubValues == 0, "SwizzledSubTile: TileN a multiple of kSubCols");
  static constexpr int kSubsPerGroup = kPerGroup / kSubValues;

  __device__ static constexpr int sub_of(int i) { return i / kSubValues; }
  // The first column and row of sub-tile s in the unit.
  __device__ static constexpr int col0(int s) { return (s % kSubsPerGroup) * kSubCols; }
  __device__ static constexpr int row0(int s) { return (s / kSubsPerGroup) * 64; }

  // The swizzle's chunk bits of every row thread t holds (row % 8 = lane / 4 for each).
  __device__ static int row_swizzle(int t) { return RowBytes == 128 ? (t % 32) / 4 : (t % 32) / 8; }
  // Thread t's byte of a sub-tile at (its row of the group, h = 0; its first column), short
  // of the column's 16-byte chunk.
  __device__ static unsigned thread_offset(int t) {
    return static_cast<unsigned>(((t / 32) * 16 + (t % 32) / 4) * RowBytes +
                                 ((t % 4) * 2 * Bytes) % 16);
  }
  // The chunk bits that XOR the chunk of each of thread t's values: its rows' swizzle and,
  // for 32-bit values, which half of an even chunk its first column is in.
  __device__ static unsigned chunk_xor(int t) {
    return static_cast<unsigned>(((t % 4) * 2 * Bytes) / 16 ^ row_swizzle(t));
  }
  // Values i and i + 1 (i even: columns c, c + 1 of one row) from the thread's offset: the
  // row 8 below for h = 1, and the chunk of the value's 8-column group in the sub-tile (even
  // for 32-bit values, so the thread's half adds by XOR). A constant but for `xor_bits`.
  __device__ static unsigned pair_offset(int i, unsigned xor_bits) {
    const int v = i % kPerGroup;
    const int h = (v / 2) % 2;
    const unsigned chunk = static_cast<unsigned>((((v / 4) * 8) % kSubCols) * Bytes / 16);
    return static_cast<unsigned>(h * 8 * RowBytes) + ((chunk ^ xor_bits) << 4);
  }
};

}  // namespace fusedgemm::kernels
