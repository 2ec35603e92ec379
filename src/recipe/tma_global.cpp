#include "recipe/tma_global.h"

#include "graph/checked_math.h"

namespace fusedgemm::recipe {

Layout kernel_arg_layout(const Layout& kernel) noexcept {
  Layout arg = kernel;
  if (arg.stride[0] == 0) arg.shape[0] = 1;
  for (int axis = 0; axis < kRank; ++axis) {
    if (arg.shape[axis] == 1) arg.stride[axis] = 0;
  }
  return arg;
}

TmaGlobal tma_global(const Layout& arg, const std::array<int, 3>& axes, int element_bits) noexcept {
  TmaGlobal g;
  std::int64_t packed_elems = 1;  // elements spanned by the dimensions below
  for (int j = 0; j < 3; ++j) {
    const std::int64_t dim = arg.shape[axes[j]];
    const std::int64_t stride = arg.stride[axes[j]];
    g.dims[j] = dim;
    if (g.fault == TmaFault::kNone && dim > kMaxTmaDim) {
      g.fault = TmaFault::kDimTooLarge;
      g.fault_dim = j;
    }
    if (j == 0) {
      g.stride_elems[0] = 1;
    } else {
      g.stride_elems[j] = dim == 1 ? packed_elems : stride;
      const std::int64_t bytes = saturating_mul(g.stride_elems[j], element_bits) / 8;
      g.stride_bytes[j - 1] = bytes;
      const TmaFault f = dim > 1 && stride == 0       ? TmaFault::kZeroStride
                         : g.stride_elems[j] < 0      ? TmaFault::kNegativeStride
                         : bytes > kMaxTmaStrideBytes ? TmaFault::kStrideTooLarge
                                                      : TmaFault::kNone;
      if (g.fault == TmaFault::kNone && f != TmaFault::kNone) {
        g.fault = f;
        g.fault_dim = j;
      }
    }
    // Packed strides stay 16-byte multiples: every extent below is (tma_contiguous_extent).
    packed_elems = saturating_mul(g.stride_elems[j], dim);
  }
  return g;
}

bool tma_storable(const Layout& arg, std::uintptr_t address, int element_bits) noexcept {
  constexpr std::int64_t kAlignBytes = 16;
  if (address % kAlignBytes != 0 || (arg.shape[2] != 1 && arg.stride[2] != 1)) return false;
  const TmaGlobal g = tma_global(arg, tma_axes(2), element_bits);
  // A row's bytes too: the copy engine writes whole 16-byte pieces of the row, so a row
  // ending inside one would overwrite the bytes after it (measured on the H200: N = 38 bf16
  // in rows of 40 elements changed elements 38 and 39, CallFuzzGpu, 2026-12-04).
  const std::int64_t row_bytes = saturating_mul(g.dims[0], element_bits) / 8;
  return g.fault == TmaFault::kNone && row_bytes % kAlignBytes == 0 &&
         g.stride_bytes[0] % kAlignBytes == 0 && g.stride_bytes[1] % kAlignBytes == 0;
}

}  // namespace fusedgemm::recipe
