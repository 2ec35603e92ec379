// Comparing what a plan wrote against the fp64 reference (DESIGN.md section 9): NaN and inf
// positions exactly (docs/SEMANTICS.md), relative error ||out - ref|| / ||ref|| over the
// finite elements, and one tolerance per stored data type so the tool and the tests judge
// alike.
#pragma once

#include <cstdint>
#include <string>

#include "fusedgemm/data_type.h"
#include "reference/graph_reference.h"

namespace fusedgemm::reference {

// The largest relative error accepted for an output stored as `type`: about two units in
// the last place of the type (bf16 1e-2, fp16 5e-3, fp8 7e-2 / 1.5e-1), 1e-3 for fp32,
// whose error comes from the kernel's fp32 accumulation order and any declared rounding
// upstream.
double relative_tolerance(DataType type);

struct Comparison {
  double relative_error = 0.0;
  double tolerance = 0.0;
  // Elements where one of the stored value and the reference is NaN or inf and the other is
  // not the same: a NaN against a finite value or an inf, an inf of either sign against
  // anything but itself.
  std::int64_t nonfinite_mismatches = 0;
  // Elements that differ from the reference as some fp32 combine order makes them
  // (OutputValues::order_effects: inf, or a value past fp32's normal range, of a mul
  // reduction's partial products); accepted, and left out of the relative error.
  std::int64_t order_dependent = 0;
  std::int64_t element_count = 0;
  bool passed() const { return nonfinite_mismatches == 0 && relative_error <= tolerance; }
  // "rel_err 2.1e-03 (tol 1.0e-02), 0 non-finite mismatches of 4096", then ", 3 order-dependent"
  // where some are
  std::string summary() const;
};

// `got` holds what the plan stored (in its declared layout); `expected` is the reference,
// compared after its rounding to the stored type (OutputValues::rounded): saturation,
// overflow to inf and NaN land where a faithful store puts them.
Comparison compare(const HostTensor& got, const OutputValues& expected);

}  // namespace fusedgemm::reference
