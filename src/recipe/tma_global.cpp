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

}  // namespace fusedgemm::recipe
