// Layout: the (shape, stride) value all host index math goes through.
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fusedgemm/layout.h"

using namespace fusedgemm;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

Layout make(Dims shape, Dims stride) {
  return Layout{shape, stride};
}

}  // namespace

TEST(Layout, RowMajorPacksLastAxisFastest) {
  EXPECT_EQ(Layout::row_major({2, 3, 4}), make({2, 3, 4}, {12, 4, 1}));
  EXPECT_EQ(Layout::row_major({1, 64, 1}), make({1, 64, 1}, {64, 1, 1}));
}

TEST(Layout, ColumnMajorPacksAxisOneFastest) {
  EXPECT_EQ(Layout::column_major({2, 3, 4}), make({2, 3, 4}, {12, 1, 3}));
  EXPECT_EQ(Layout::column_major({1, 1, 8}), make({1, 1, 8}, {8, 1, 1}));
}

TEST(Layout, DefaultIsOneScalar) {
  const Layout layout;
  EXPECT_EQ(layout.element_count(), 1);
  EXPECT_EQ(layout.span(), 1);
  EXPECT_TRUE(layout.is_injective());
  EXPECT_EQ(layout.contiguous_axis(), -1);
}

TEST(Layout, ElementCountIsTheProductOfExtents) {
  EXPECT_EQ(make({2, 3, 4}, {0, 0, 0}).element_count(), 24);
  EXPECT_EQ(make({2, 0, 4}, {0, 4, 1}).element_count(), 0);
}

TEST(Layout, Span) {
  struct Case {
    Layout layout;
    std::int64_t span;
  };
  const std::vector<Case> cases = {
      {Layout::row_major({2, 3, 4}), 24},
      {Layout::column_major({2, 3, 4}), 24},
      {make({2, 4, 4}, {40, 8, 1}), 68},  // rows padded to 8, batches to 40
      {make({2, 4, 4}, {0, 4, 1}), 16},   // batch broadcast
      {make({1, 1, 48}, {0, 0, 1}), 48},  // per-column aux
      {make({1, 1, 1}, {0, 0, 0}), 1},    // scalar
      {make({1, 1, 1}, {7, 9, 11}), 1},   // strides of extent-1 axes reach nothing
      {make({0, 4, 4}, {16, 4, 1}), 0},   // empty
      {make({2, 4, 0}, {16, 4, 1}), 0},
      {make({2, std::int64_t{1} << 40, 4}, {kMax / 2, std::int64_t{1} << 30, 1}), kMax},
  };
  for (const auto& c : cases) EXPECT_EQ(c.layout.span(), c.span) << to_string(c.layout);
}

TEST(Layout, IsInjective) {
  struct Case {
    Layout layout;
    int overlapping_axis;  // -1: injective
  };
  const std::vector<Case> cases = {
      // packed, each major
      {Layout::row_major({2, 64, 32}), -1},
      {Layout::column_major({2, 64, 32}), -1},
      {make({2, 32, 64}, {2048, 1, 32}), -1},  // B K-major
      {make({2, 64, 32}, {32, 64, 1}), -1},    // batch between rows and columns
      {make({2, 64, 32}, {1, 64, 2}), -1},     // batch fastest
      // padded (pitched)
      {make({2, 4, 4}, {40, 8, 1}), -1},
      {make({2, 4, 4}, {24, 1, 5}), -1},
      // zero and arbitrary strides on extent-1 axes
      {make({1, 4, 4}, {0, 4, 1}), -1},
      {make({1, 1, 48}, {0, 0, 1}), -1},
      {make({1, 1, 1}, {0, 0, 0}), -1},
      {make({1, 4, 4}, {3, 4, 1}), -1},
      {make({1, 4, 4}, {-5, 4, 1}), -1},
      // broadcast strides: zero on an extent > 1
      {make({2, 4, 4}, {0, 4, 1}), 0},
      {make({2, 4, 4}, {16, 0, 1}), 1},
      {make({2, 4, 4}, {16, 4, 0}), 2},
      // overlapping rows
      {make({1, 4, 4}, {16, 2, 1}), 1},
      {make({2, 4, 4}, {8, 4, 1}), 0},
      {make({1, 4, 4}, {16, 1, 1}), 2},  // equal strides: the later axis overlaps
      {make({2, 4, 4}, {16, 1, 3}), 2},  // permuted: axis 2 lands inside axis 1
      // interleaved: distinct offsets, but not nested; refused by design
      {make({1, 3, 2}, {6, 2, 3}), 2},
      // negative stride on an extent > 1
      {make({1, 4, 4}, {16, 4, -1}), 2},
      // empty layouts reach nothing twice
      {make({0, 4, 4}, {0, 0, 0}), -1},
      // a span past int64 saturates rather than wrapping
      {make({2, std::int64_t{1} << 40, std::int64_t{1} << 40},
            {kMax / 2, 1, std::int64_t{1} << 40}),
       0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.layout.overlapping_axis(), c.overlapping_axis) << to_string(c.layout);
    EXPECT_EQ(c.layout.is_injective(), c.overlapping_axis < 0) << to_string(c.layout);
  }
}

TEST(Layout, PermutingKeepsInjectivityAndSpan) {
  const std::vector<std::array<int, kRank>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const std::vector<Layout> layouts = {Layout::row_major({2, 3, 4}), make({2, 4, 4}, {40, 8, 1}),
                                       make({1, 4, 4}, {16, 2, 1})};
  for (const auto& layout : layouts) {
    for (const auto& perm : perms) {
      const Layout p = layout.permuted(perm);
      EXPECT_EQ(p.span(), layout.span()) << to_string(p);
      EXPECT_EQ(p.is_injective(), layout.is_injective()) << to_string(p);
    }
  }
}

TEST(Layout, ContiguousAxis) {
  struct Case {
    Layout layout;
    int axis;
  };
  const std::vector<Case> cases = {
      {Layout::row_major({2, 64, 32}), 2},   {Layout::column_major({2, 64, 32}), 1},
      {make({1, 32, 64}, {2048, 1, 32}), 1},  // B K-major
      {Layout::row_major({4, 1, 1}), 0},      // dense [b, 1, 1]
      {Layout::row_major({1, 64, 1}), 1},    {make({2, 4, 4}, {40, 8, 1}), 2},
      {make({2, 4, 4}, {0, 0, 0}), -1},   // broadcast
      {make({1, 1, 1}, {1, 1, 1}), -1},   // scalar
      {make({2, 4, 4}, {32, 8, 2}), -1},  // strided: no unit stride
  };
  for (const auto& c : cases) EXPECT_EQ(c.layout.contiguous_axis(), c.axis) << to_string(c.layout);
}

TEST(Layout, PermutedMovesShapeAndStrideTogether) {
  const Layout rm = Layout::row_major({2, 3, 4});
  EXPECT_EQ(rm.permuted({0, 2, 1}), make({2, 4, 3}, {12, 1, 4}));
  EXPECT_EQ(rm.permuted({2, 0, 1}), make({4, 2, 3}, {1, 12, 4}));
  EXPECT_EQ(rm.permuted({0, 1, 2}), rm);
  // [b, K, N] read as (b, N, K): the B operand's kernel order (DESIGN.md section 3).
  const Layout b_k_major = make({1, 32, 64}, {2048, 1, 32});
  EXPECT_EQ(b_k_major.permuted({0, 2, 1}).contiguous_axis(), 2);
  EXPECT_EQ(b_k_major.permuted({0, 2, 1}).permuted({0, 2, 1}), b_k_major);
}

TEST(Layout, ToString) {
  EXPECT_EQ(to_string(Dims{2, 64, 32}), "[2, 64, 32]");
  EXPECT_EQ(to_string(Dims{-1, 0, 1}), "[-1, 0, 1]");
  EXPECT_EQ(to_string(Layout::row_major({2, 64, 32})), "[2, 64, 32]:[2048, 32, 1]");
  EXPECT_EQ(to_string(make({1, 1, 48}, {0, 0, 1})), "[1, 1, 48]:[0, 0, 1]");
}
