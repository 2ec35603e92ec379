// How the generated epilogue addresses aux inputs and dense outputs: once per unit, each
// row slot of a thread (kernels/fragment_slots.cuh) gets its problem row, whether it is
// inside the problem and a pointer to the element at the thread's first column; a value of
// the fragment is then at (row slot r, column offset c), c = Frag::col(i, 0) a constant of
// the unrolled loop, so an element's address is row[r] + c * column stride and its bounds
// check one compare. Computing (batch, m, n) and their 64-bit offsets per element made the
// unrolled epilogue so long that instruction fetch stalled the consumers (43% of stalls for
// bias + GELU, ncu on the H200, 2026-12-02). Device code; no host headers (NVRTC).
#pragma once

#include "kernels/element_io.cuh"         // Elem, encode, decode
#include "kernels/epilogue_contract.cuh"  // TileCoord
#include "kernels/fragment_slots.cuh"     // FragmentSlots
#include "kernels/kernel_args.h"          // KernelArgs, BufferArg
#include "kernels/ptx/barrier.cuh"        // bar_sync

namespace fusedgemm::kernels {

template <Elem E>
inline constexpr int kElemBytes = E == Elem::kF32 || E == Elem::kS32    ? 4
                                  : E == Elem::kF16 || E == Elem::kBF16 ? 2
                                                                        : 1;

// One element's code at q: through the read-only path (global memory the kernel never
// writes), plainly (shared memory), or stored.
template <Elem E>
__device__ __forceinline__ unsigned ldg_code(const void* q) {
  if constexpr (kElemBytes<E> == 4) {
    return __ldg(static_cast<const unsigned*>(q));
  } else if constexpr (kElemBytes<E> == 2) {
    return __ldg(static_cast<const unsigned short*>(q));
  } else {
    return __ldg(static_cast<const unsigned char*>(q));
  }
}
template <Elem E>
__device__ __forceinline__ unsigned load_code(const void* q) {
  if constexpr (kElemBytes<E> == 4) {
    return *static_cast<const unsigned*>(q);
  } else if constexpr (kElemBytes<E> == 2) {
    return *static_cast<const unsigned short*>(q);
  } else {
    return *static_cast<const unsigned char*>(q);
  }
}
template <Elem E>
__device__ __forceinline__ void store_code(void* q, unsigned code) {
  if constexpr (kElemBytes<E> == 4) {
    *static_cast<unsigned*>(q) = code;
  } else if constexpr (kElemBytes<E> == 2) {
    *static_cast<unsigned short*>(q) = static_cast<unsigned short>(code);
  } else {
    *static_cast<unsigned char*>(q) = static_cast<unsigned char>(code);
  }
}

// This thread's place in its unit: rows per row slot, the first column, the bounds.
template <int TileM, int TileN>
struct UnitPosition {
  using Slots = FragmentSlots<TileM, TileN>;
  long long m[Slots::kRows];  // problem row of each row slot
  bool row_in[Slots::kRows];  // m < M
  long long n0;               // problem column at column offset 0 (the thread's first)
  long long cols_left;        // columns from n0 to the problem's edge

  __device__ UnitPosition(const KernelArgs& args, const TileCoord& unit, int thread) {
#pragma unroll
    for (int r = 0; r < Slots::kRows; ++r) {
      m[r] = unit.m0 + Slots::row_of(r, thread);
      row_in[r] = m[r] < args.m;
    }
    n0 = unit.n0 + Slots::col_of(0, thread);
    cols_left = args.n - n0;
  }
  // Whether (row slot r, column offset c) is inside the problem.
  __device__ bool inside(int r, int c) const {
    return row_in[r] && c < cols_left;
  }
};

// The element of a buffer at each row slot's row and the thread's first column.
template <Elem E, int TileM, int TileN>
struct RowPointers {
  using Slots = FragmentSlots<TileM, TileN>;
  char* row[Slots::kRows];
  long long column_bytes;  // bytes from one column to the next (stride 0: a broadcast)

  __device__ RowPointers(const BufferArg& a, const UnitPosition<TileM, TileN>& pos,
                         long long batch) {
    char* base = static_cast<char*>(a.data) + batch * a.stride[0] * kElemBytes<E> +
                 pos.n0 * a.stride[2] * kElemBytes<E>;
#pragma unroll
    for (int r = 0; r < Slots::kRows; ++r) row[r] = base + pos.m[r] * a.stride[1] * kElemBytes<E>;
    column_bytes = a.stride[2] * kElemBytes<E>;
  }
  __device__ char* at(int r, int c) const {
    return row[r] + c * column_bytes;
  }
};

// How an aux input covers the unit (fusion::Broadcast, from its declared dims; fixed at
// build, since a call cannot change an extent of 1).
enum class AuxCover : int { kScalar, kRow, kColumn, kFull };

// An aux input (kernel axis order; stride 0 on broadcast axes). A vector is loaded once per
// value a load batch needs, not once per element: the generated loop copies element k of a
// batch from its `twin` (an earlier element of the batch at the same column of a column
// vector, the same row of a row vector) — the compiler does not merge repeated read-only
// loads of one address (bias + GELU: 128 loads per thread for 64 columns). A scalar is read
// once per unit. Loads through the read-only path: the rules keep read roles apart from written
// ones (buffer_overlap), so the loads may move above the epilogue's stores.
template <Elem E, AuxCover Cover, int TileM, int TileN>
struct AuxRows {
  static_assert(E != Elem::kE2M1, "AuxRows: fp4 aux are not loaded; the gate declines them");
  RowPointers<E, TileM, TileN> p;

  __device__ AuxRows(const BufferArg& a, const UnitPosition<TileM, TileN>& pos, long long batch)
      : p(a, pos, batch) {}
  // The first element k' < k of the load batch of elements [i0, i0 + k] that reads the same
  // value as element i0 + k, or -1 (a constant of the unrolled loop).
  __device__ static constexpr int twin(int i0, int k) {
    using Slots = FragmentSlots<TileM, TileN>;
    for (int j = 0; j < k; ++j) {
      if constexpr (Cover == AuxCover::kColumn) {
        if (Slots::col_slot(i0 + j) == Slots::col_slot(i0 + k)) return j;
      } else if constexpr (Cover == AuxCover::kRow) {
        if (Slots::row_slot(i0 + j) == Slots::row_slot(i0 + k)) return j;
      }
    }
    return -1;
  }
  // The value at (r, c) where it is inside the problem, else 0. A scalar is always read (the
  // epilogue runs only for a unit that starts inside the problem).
  __device__ float at(const UnitPosition<TileM, TileN>& pos, int r, int c) const {
    if constexpr (Cover == AuxCover::kScalar) {
      return load(p.row[0]);
    } else if constexpr (Cover == AuxCover::kColumn) {
      return c < pos.cols_left ? load(p.at(0, c)) : 0.0f;
    } else if constexpr (Cover == AuxCover::kRow) {
      return pos.row_in[r] ? load(p.row[r]) : 0.0f;
    } else {
      return pos.inside(r, c) ? load(p.at(r, c)) : 0.0f;
    }
  }

 private:
  __device__ static float load(const char* q) { return decode<E>(ldg_code<E>(q)); }
};

// A column vector (a bias over N) staged in the consumer's epilogue scratch once per unit:
// its TileN values, raw, zero past the problem's last column. Each element then reads its
// value with one shared-memory load at a constant offset from the thread's first column —
// from global memory every value cost a 64-bit address, a bounds check and a load through
// L1 (the bias + GELU kernel at 128x256: 130 LDG in its SASS, 6 once staged; 3.4% faster at
// 4096^3, docs/PERF.md run 34). The codegen stages one only where the kernel's shared memory
// has room (codegen/epilogue_plan.h, aux_staged_offset). A unit's staged vectors are written
// between two stage_columns_barrier calls: the first keeps the previous unit's readers ahead
// of the writes, the second the writes ahead of this unit's readers.
template <Elem E, int TileM, int TileN>
struct StagedColumns {
  static_assert(E != Elem::kE2M1, "StagedColumns: fp4 aux are not loaded; the gate declines them");
  using Slots = FragmentSlots<TileM, TileN>;
  const unsigned char* first;  // the thread's first column

  __device__ StagedColumns(const BufferArg& a, const KernelArgs& args, const TileCoord& unit,
                           unsigned char* smem, int thread)
      : first(smem + Slots::col_of(0, thread) * kElemBytes<E>) {
    const char* base = static_cast<const char*>(a.data) +
                       (unit.batch * a.stride[0] + unit.n0 * a.stride[2]) * kElemBytes<E>;
    const long long cols_left = args.n - unit.n0;
    for (int c = thread; c < TileN; c += 128) {
      const unsigned code =
          c < cols_left ? ldg_code<E>(base + c * a.stride[2] * kElemBytes<E>) : 0u;
      store_code<E>(smem + c * kElemBytes<E>, code);
    }
  }
  __device__ static constexpr int twin(int i0, int k) {
    return AuxRows<E, AuxCover::kColumn, TileM, TileN>::twin(i0, k);
  }
  // The value at column offset c of every row (0 past the problem's edge).
  __device__ float at(const UnitPosition<TileM, TileN>&, int, int c) const {
    return decode<E>(load_code<E>(first + c * kElemBytes<E>));
  }
};

__device__ __forceinline__ void stage_columns_barrier() {
  ptx::bar_sync(epilogue_barrier_id(), 128);
}

// A dense output. A thread's values at column offsets c and c + 1 (c even) are neighbours
// of one row: they go out as one store of twice the width where the call's layout puts
// them side by side in one aligned word (pairs_fill_words: uniform over the launch).
template <Elem E, int TileM, int TileN>
struct OutputRows {
  static_assert(E != Elem::kE2M1, "OutputRows: fp4 is stored in pairs by block_quantize");
  RowPointers<E, TileM, TileN> p;
  bool pairs;

  __device__ OutputRows(const BufferArg& a, const UnitPosition<TileM, TileN>& pos, long long batch)
      : p(a, pos, batch), pairs(pairs_fill_words<E>(a)) {}

  // v0 at (r, c), v1 at (r, c + 1), c even, each where inside (in1 implies in0). (Three
  // predicated stores instead of the branch save 17% of the plain kernel's instructions but
  // keep both codes live: a bias + amax tap epilogue then spills at 168 registers.)
  __device__ void store_pair(int r, int c, float v0, float v1, bool in0, bool in1) const {
    char* q = p.at(r, c);
    const bool word = pairs && in1;
    if (word) {
      const unsigned lo = encode<E>(v0);
      const unsigned hi = encode<E>(v1);
      if constexpr (kElemBytes<E> == 4) {
        *reinterpret_cast<unsigned long long*>(q) =
            static_cast<unsigned long long>(lo) | (static_cast<unsigned long long>(hi) << 32);
      } else if constexpr (kElemBytes<E> == 2) {
        *reinterpret_cast<unsigned*>(q) = lo | (hi << 16);
      } else {
        *reinterpret_cast<unsigned short*>(q) = static_cast<unsigned short>(lo | (hi << 8));
      }
      return;
    }
    if (in0) store_code<E>(q, encode<E>(v0));
    if (in1) store_code<E>(q + p.column_bytes, encode<E>(v1));
  }
};

}  // namespace fusedgemm::kernels
