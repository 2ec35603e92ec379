// Seeds: the identity word written into every tap before the kernel accumulates into it.
// A tap's layout may be strided; it is collapsed into the fewest pitched 32-bit fills
// (cuMemsetD2D32Async's shape): a contiguous run is the fill's width, the next axis its
// rows, and what is left (at most two axes) repeats the fill.
#pragma once

#include <cstdint>

#include "fusedgemm/layout.h"
#include "runtime/device.h"

namespace fusedgemm::runtime {

struct SeedPlan {
  Fill32 fill;                       // the first fill
  std::uint64_t repeat[2] = {1, 1};  // outer repeats of that fill
  std::int64_t repeat_stride_bytes[2] = {0, 0};
  std::uint64_t fill_count() const { return repeat[0] * repeat[1]; }
};

// @pre `layout` is injective with non-negative strides; elements are 4 bytes.
SeedPlan plan_seed(void* data, const Layout& layout, std::uint32_t word) noexcept;

// Issues every fill of `plan` on `stream`, stopping at the first device error.
Status issue_seed(Device& device, const SeedPlan& plan, Stream stream) noexcept;

}  // namespace fusedgemm::runtime
