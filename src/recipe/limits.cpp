#include "recipe/limits.h"

#include "graph/checked_math.h"

namespace fusedgemm::recipe {

std::int64_t contiguous_extent_modulus(DataType type) {
  const int bits = bits_of(type);
  return bits == 0 ? 1 : kTmaGranuleBytes * 8 / bits;
}

std::int64_t bytes_of(DataType type, std::int64_t elements) {
  return saturating_add(saturating_mul(elements, bits_of(type)), 7) / 8;
}

int misaligned_stride_axis(DataType type, const Layout& layout, int contiguous_axis) {
  for (int axis = 0; axis < kRank; ++axis) {
    if (axis == contiguous_axis || layout.shape[axis] <= 1) continue;
    const std::int64_t stride = layout.stride[axis];
    if (stride < 0 || (stride == 0 && axis != 0) || stride % contiguous_extent_modulus(type) != 0) {
      return axis;
    }
  }
  return -1;
}

}  // namespace fusedgemm::recipe
