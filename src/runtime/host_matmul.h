// The host's matrix product from operand panels, shared by the host device's interpreter and
// the fallback engine's host runner (both on the host device).
#pragma once

#include <cstdint>

namespace fusedgemm::runtime {

// out[r * n + c] = the fp32 rounding of the sum over i = 0, 1, ..., k - 1, in that order and
// in double, of a[r * k + i] * b[c * k + i]: a is m rows and b n rows of k values each (both
// K-contiguous panels). Each sum runs whole on one thread in k order, so the bits are the
// same on any number of threads and equal a plain loop's. A product past 2^22 flops splits
// the rows over the cores (at most 8 threads).
void multiply_panels(const double* a, const double* b, float* out, std::int64_t m, std::int64_t n,
                     std::int64_t k);

}  // namespace fusedgemm::runtime
