// Limits derived from the hardware, stated once and used by the support gate and by the
// per-call rules alike (DESIGN.md section 6).
#pragma once

#include <cstdint>

#include "fusedgemm/data_type.h"

namespace fusedgemm::recipe {

// TMA moves 16-byte granules: a tensor map's global strides are multiples of 16 bytes
// (CUDA driver API, cuTensorMapEncodeTiled).
inline constexpr std::int64_t kTmaGranuleBytes = 16;

// The contiguous extent of a TMA-read buffer must be a multiple of this many elements:
// 16 bytes, i.e. 8 for bf16, 16 for fp8, 32 for fp4 (packed two to a byte).
std::int64_t contiguous_extent_modulus(DataType type);

// Bytes spanned by `elements` elements of `type` (fp4 packs two per byte, rounding up).
std::int64_t bytes_of(DataType type, std::int64_t elements);

// Accumulators one CTA keeps in registers; each GEMM of a multi-GEMM graph adds one tile.
inline constexpr int kMaxGemms = 4;

}  // namespace fusedgemm::recipe
