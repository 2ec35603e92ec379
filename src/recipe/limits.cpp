#include "recipe/limits.h"

namespace fusedgemm::recipe {

std::int64_t contiguous_extent_modulus(DataType type) {
  const int bits = bits_of(type);
  return bits == 0 ? 1 : kTmaGranuleBytes * 8 / bits;
}

std::int64_t bytes_of(DataType type, std::int64_t elements) {
  return (elements * bits_of(type) + 7) / 8;
}

}  // namespace fusedgemm::recipe
