#include "recipe/range_sweep.h"

#include <array>

namespace fusedgemm::recipe {

std::uint32_t meeting_roles(std::span<const ByteRange> ranges) noexcept {
  const std::size_t n = ranges.size();
  // Sorted through one-byte indices: moving the 24-byte ranges themselves cost twice the
  // time (execute_bound/taps, 2026-12-02, CPU host).
  std::array<std::uint8_t, 32> order;
  bool wrapped = false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uintptr_t lo = ranges[i].lo;
    wrapped |= ranges[i].hi < lo;
    std::size_t j = i;
    for (; j > 0 && ranges[order[j - 1]].lo > lo; --j) order[j] = order[j - 1];
    order[j] = static_cast<std::uint8_t>(i);
  }
  if (wrapped) {
    std::uint32_t all = 0;
    for (const ByteRange& r : ranges) all |= std::uint32_t{1} << r.role;
    return all;
  }

  // Apart buffers, the usual call, end in one pass: no range starts before the furthest end
  // seen so far.
  std::uintptr_t furthest_hi = 0;
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    const ByteRange& r = ranges[order[i]];
    if (r.lo < furthest_hi) {
      any = true;
      break;
    }
    if (r.hi > furthest_hi) furthest_hi = r.hi;
  }
  if (!any) return 0;

  // Some two meet: mark every pair that does. By lo, range a meets a later b while b starts
  // before a ends, so each inner walk stops at the first b past a's end.
  std::uint32_t meeting = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const ByteRange& a = ranges[order[i]];
    for (std::size_t k = i + 1; k < n && ranges[order[k]].lo < a.hi; ++k) {
      const ByteRange& b = ranges[order[k]];
      if (a.lo < b.hi) meeting |= (std::uint32_t{1} << a.role) | (std::uint32_t{1} << b.role);
    }
  }
  return meeting;
}

}  // namespace fusedgemm::recipe
