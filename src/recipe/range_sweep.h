// Which of a call's buffers meet another's bytes: a sort and one sweep over their address
// ranges, so the per-call buffer_overlap rule pays for the exact element test only where two
// ranges meet.
#pragma once

#include <cstdint>
#include <span>

namespace fusedgemm::recipe {

// One role's bytes, [lo, hi). No member initializers: the rule keeps an array of 32 on the
// stack per call, and zeroing it cost more than the sweep (execute_bound, 2026-12-02, CPU
// host).
struct ByteRange {
  std::uintptr_t lo;
  std::uintptr_t hi;
  int role;  // 0 to 31: the bit it sets in meeting_roles's mask
};

// A mask with bit `role` set for every range that meets another: a.lo < b.hi && b.lo < a.hi,
// the pairwise test it replaces (an empty range meets one that strictly contains its lo).
// Sorts by lo (insertion sort: there are at most 32) and sweeps once; only when some range
// starts before an earlier one ends are the meeting pairs marked. A range with hi < lo (a
// wrapped address sum) has no place in a sweep, so then every range's bit is set and the
// caller's exact test decides. Allocates nothing.
std::uint32_t meeting_roles(std::span<const ByteRange> ranges) noexcept;

}  // namespace fusedgemm::recipe
