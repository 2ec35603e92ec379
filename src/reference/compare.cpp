#include "reference/compare.h"

#include <cmath>

#include <fmt/format.h>

namespace fusedgemm::reference {

double relative_tolerance(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 1e-3;
    case DataType::kFloat16: return 5e-3;
    case DataType::kBFloat16: return 1e-2;
    case DataType::kFp8E4M3: return 7e-2;
    case DataType::kFp8E5M2: return 1.5e-1;
    case DataType::kFp4E2M1: return 3e-1;
    default: return 1e-2;  // integers and e8m0 compare after the reference's rounding
  }
}

std::string Comparison::summary() const {
  std::string text = fmt::format("rel_err {:.1e} (tol {:.1e}), {} non-finite mismatches of {}",
                                 relative_error, tolerance, nonfinite_mismatches, element_count);
  if (order_dependent > 0) text += fmt::format(", {} order-dependent", order_dependent);
  return text;
}

namespace {

// Whether `have` is what some fp32 combine order gives for an element with these
// OrderEffect bits, where it need not match the fp64 reference.
bool order_gives(std::uint8_t effects, double have) {
  const bool negative = (effects & kNegative) != 0;
  const bool overflow = (effects & kMayOverflow) != 0;
  const bool underflow = (effects & kMayUnderflow) != 0;
  if (std::isnan(have)) return overflow && underflow;  // inf * 0
  if (std::isinf(have)) return overflow && std::signbit(have) == negative;
  return underflow && (have == 0 || std::signbit(have) == negative);
}

}  // namespace

Comparison compare(const HostTensor& got, const OutputValues& expected) {
  Comparison c;
  c.tolerance = relative_tolerance(expected.type);
  // What a faithful store holds: saturated, overflowed to inf or NaN exactly where the
  // stored type does it (docs/SEMANTICS.md), so a correct kernel is not failed for it.
  const auto& ref = expected.rounded;
  double diff2 = 0.0;
  double ref2 = 0.0;
  const Dims& d = expected.dims;
  for (std::int64_t b = 0; b < d[0]; ++b) {
    for (std::int64_t r = 0; r < d[1]; ++r) {
      for (std::int64_t col = 0; col < d[2]; ++col) {
        const std::int64_t i = dense_index(d, b, r, col);
        const double want = ref[i];
        const double have = got.at(b, r, col);
        ++c.element_count;
        const bool exact = have == want || (std::isnan(have) && std::isnan(want));
        if (!exact && !expected.order_effects.empty() &&
            order_gives(expected.order_effects[i], have)) {
          ++c.order_dependent;
          continue;
        }
        if (!std::isfinite(have) || !std::isfinite(want)) {
          // NaN only where the reference has NaN, inf only where it has inf of that sign.
          const bool same = (std::isnan(have) && std::isnan(want)) || have == want;
          if (!same) ++c.nonfinite_mismatches;
          continue;
        }
        diff2 += (have - want) * (have - want);
        ref2 += want * want;
      }
    }
  }
  c.relative_error = ref2 > 0.0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return c;
}

}  // namespace fusedgemm::reference
