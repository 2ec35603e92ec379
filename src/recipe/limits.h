// Limits derived from the hardware, stated once and used by the support gate and by the
// per-call rules alike (DESIGN.md section 6).
#pragma once

#include <cstdint>

#include "fusedgemm/data_type.h"
#include "fusedgemm/layout.h"

namespace fusedgemm::recipe {

// TMA moves 16-byte granules: a tensor map's global strides are multiples of 16 bytes
// (CUDA driver API, cuTensorMapEncodeTiled).
inline constexpr std::int64_t kTmaGranuleBytes = 16;

// The contiguous extent of a TMA-read buffer must be a multiple of this many elements:
// 16 bytes, i.e. 8 for bf16, 16 for fp8, 32 for fp4 (packed two to a byte).
std::int64_t contiguous_extent_modulus(DataType type);

// The first axis of `layout` other than `contiguous_axis` (extent > 1 only) whose stride a
// TMA descriptor cannot take: negative (TMA strides are unsigned), 0 below the batch (a
// batch of stride 0 is a broadcast the kernel reads at batch 0; anywhere else it would need a
// stride the descriptor does not have), or not a multiple of contiguous_extent_modulus(type)
// elements (16 bytes). In elements, not bytes: an odd fp4 stride is half a byte, which
// counting whole bytes would round away. -1 when every stride is legal. The support gate
// (declared layouts) and the stride_alignment call rule (kernel layouts) both ask this.
int misaligned_stride_axis(DataType type, const Layout& layout, int contiguous_axis);

// Bytes spanned by `elements` elements of `type` (fp4 packs two per byte, rounding up).
std::int64_t bytes_of(DataType type, std::int64_t elements);

// Accumulators one CTA keeps in registers; each GEMM of a multi-GEMM graph adds one tile.
inline constexpr int kMaxGemms = 4;
// Pointwise operations one fused epilogue computes. NVRTC's time grows fast past it: each op
// is unrolled over every value a thread holds (128 of a 128x256 tile), and a chain of 32
// relus compiled in 9 s, of 64 in 108 s and 2.3 GB (2026-12-05, this VM). A graph with more
// runs on the fallback engine.
inline constexpr int kMaxEpilogueOps = 32;

}  // namespace fusedgemm::recipe
