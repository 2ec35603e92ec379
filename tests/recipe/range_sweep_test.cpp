// meeting_roles against the pairwise search it replaced in the buffer_overlap rule, on
// random range sets: tight ones (ties, empty ranges, nesting), sparse ones like real
// buffers, and ones with a wrapped range.
#include "recipe/range_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace fusedgemm::recipe {
namespace {

bool meet(const ByteRange& a, const ByteRange& b) {
  return !(a.hi <= b.lo || b.hi <= a.lo);  // as buffer_overlap's pairwise search tests it
}

std::uint32_t bit(int role) {
  return std::uint32_t{1} << role;
}

// The old rule: the first written role, in role order, whose range meets another's, or -1.
int first_written_pairwise(const std::vector<ByteRange>& by_role, std::uint32_t written) {
  for (const ByteRange& w : by_role) {
    if ((written & bit(w.role)) == 0) continue;
    for (const ByteRange& r : by_role) {
      if (r.role != w.role && meet(w, r)) return w.role;
    }
  }
  return -1;
}

std::uint32_t pairwise_mask(const std::vector<ByteRange>& ranges) {
  std::uint32_t mask = 0;
  for (const ByteRange& a : ranges) {
    for (const ByteRange& b : ranges) {
      if (a.role != b.role && meet(a, b)) mask |= bit(a.role);
    }
  }
  return mask;
}

// The new rule's loop: candidates in role order, each confirmed by the exact (here: pairwise
// range) test.
int first_written_swept(const std::vector<ByteRange>& by_role, std::uint32_t written,
                        std::uint32_t candidates) {
  for (; candidates != 0; candidates &= candidates - 1) {
    const int role = std::countr_zero(candidates);
    if ((written & bit(role)) == 0) continue;
    const auto w = std::find_if(by_role.begin(), by_role.end(),
                                [&](const ByteRange& r) { return r.role == role; });
    for (const ByteRange& r : by_role) {
      if (r.role != role && meet(*w, r)) return role;
    }
  }
  return -1;
}

std::uint32_t swept(std::vector<ByteRange> ranges) {
  return meeting_roles(ranges);
}

std::uint32_t every_role(const std::vector<ByteRange>& ranges) {
  std::uint32_t mask = 0;
  for (const ByteRange& r : ranges) mask |= bit(r.role);
  return mask;
}

enum class Regime { kTight, kSparse, kWrapped };

std::vector<ByteRange> random_ranges(std::mt19937_64& rng, Regime regime) {
  std::vector<int> roles(32);
  for (int i = 0; i < 32; ++i) roles[i] = i;
  std::shuffle(roles.begin(), roles.end(), rng);
  const int n = static_cast<int>(rng() % 33);
  roles.resize(n);
  std::sort(roles.begin(), roles.end());  // as the rule lists them: role order
  std::vector<ByteRange> ranges;
  for (int role : roles) {
    std::uintptr_t lo = 0;
    std::uintptr_t span = 0;
    switch (regime) {
      case Regime::kTight:
        lo = rng() % 64;
        span = rng() % 12;  // 0: an empty range
        break;
      case Regime::kSparse:
        // One slot of 1 MiB per buffer, now and then the neighbour's: mostly apart.
        lo = (rng() % 40) * (std::uintptr_t{1} << 20) + (rng() % 4) * 256;
        span = (rng() % 8 == 0) ? (std::uintptr_t{1} << 20) + 512 : (rng() % 4096) + 1;
        break;
      case Regime::kWrapped:
        lo = rng() % 64 + (std::uintptr_t{1} << 40);
        span = rng() % 12;
        if (rng() % 8 == 0) span = ~std::uintptr_t{0} - rng() % 16;  // a negative span
        break;
    }
    ranges.push_back({lo, lo + span, role});
  }
  return ranges;
}

TEST(RangeSweep, FindsTheFirstOverlappingWrittenRoleThePairwiseSearchFinds) {
  std::mt19937_64 rng(20261202);
  for (Regime regime : {Regime::kTight, Regime::kSparse, Regime::kWrapped}) {
    for (int trial = 0; trial < 20000; ++trial) {
      const std::vector<ByteRange> by_role = random_ranges(rng, regime);
      const auto written = static_cast<std::uint32_t>(rng());
      std::vector<ByteRange> shuffled = by_role;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      const std::uint32_t candidates = meeting_roles(shuffled);
      const bool wrapped = std::any_of(by_role.begin(), by_role.end(),
                                       [](const ByteRange& r) { return r.hi < r.lo; });
      // Exactly the pairwise verdicts where a sweep applies; every role where one wraps.
      EXPECT_EQ(candidates, wrapped ? every_role(by_role) : pairwise_mask(by_role))
          << "regime " << static_cast<int>(regime) << " trial " << trial;
      EXPECT_EQ(first_written_swept(by_role, written, candidates),
                first_written_pairwise(by_role, written))
          << "regime " << static_cast<int>(regime) << " trial " << trial;
    }
  }
}

TEST(RangeSweep, EdgeCasesMatchThePairwiseTest) {
  struct Case {
    const char* what;
    std::vector<ByteRange> ranges;
    std::uint32_t meeting;
  };
  const std::vector<Case> cases = {
      {"none", {}, 0},
      {"one", {{0, 8, 0}}, 0},
      {"touching", {{0, 8, 0}, {8, 16, 1}}, 0},
      {"one byte shared", {{0, 9, 0}, {8, 16, 1}}, bit(0) | bit(1)},
      {"identical", {{16, 32, 3}, {16, 32, 5}}, bit(3) | bit(5)},
      {"nested, far apart in order", {{0, 100, 0}, {200, 300, 1}, {40, 50, 2}}, bit(0) | bit(2)},
      {"long range meets a later one past a short one",
       {{0, 100, 0}, {10, 20, 1}, {90, 95, 2}},
       bit(0) | bit(1) | bit(2)},
      {"empty inside another", {{0, 16, 0}, {8, 8, 1}}, bit(0) | bit(1)},
      {"empty at another's lo", {{8, 16, 0}, {8, 8, 1}}, 0},
      {"two empty at one address", {{8, 8, 0}, {8, 8, 1}}, 0},
      {"wrapped: every role", {{0, 8, 0}, {100, 50, 1}, {200, 300, 2}}, bit(0) | bit(1) | bit(2)},
      {"roles 31 and 30", {{0, 8, 31}, {4, 12, 30}}, bit(30) | bit(31)},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(swept(c.ranges), c.meeting) << c.what;
    const bool wrapped = std::any_of(c.ranges.begin(), c.ranges.end(),
                                     [](const ByteRange& r) { return r.hi < r.lo; });
    if (!wrapped) {
      EXPECT_EQ(swept(c.ranges), pairwise_mask(c.ranges)) << c.what;
    }
  }
}

}  // namespace
}  // namespace fusedgemm::recipe
