// Comparing what a plan wrote against the fp64 reference (DESIGN.md section 9): relative
// error ||out - ref|| / ||ref|| over every element, NaN never passing, and one tolerance
// per stored data type so the tool and the tests judge alike.
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
  std::int64_t nan_count = 0;  // non-finite values written where the reference is finite
  std::int64_t element_count = 0;
  bool passed() const { return nan_count == 0 && relative_error <= tolerance; }
  std::string summary() const;  // "rel_err 2.1e-03 (tol 1.0e-02), 0 NaN of 4096"
};

// `got` holds what the plan stored (in its declared layout); `expected` is the reference.
// Integer outputs compare against the reference after its rounding, float outputs before.
Comparison compare(const HostTensor& got, const OutputValues& expected);

}  // namespace fusedgemm::reference
