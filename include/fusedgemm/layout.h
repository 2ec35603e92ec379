// A layout is a value: a (shape, stride) map from an index tuple to an element offset.
// All host index math goes through it. Extents and strides are in
// elements; for packed types (fp4) an element is one value, not one byte.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace fusedgemm {

inline constexpr int kRank = 3;  // every tensor is [batch, rows, columns]

using Dims = std::array<std::int64_t, kRank>;

// No tensor (graph rule tensor_span) and no call's view (call rule view_span) spans more
// elements: byte counts and address offsets computed from a layout then fit 64-bit integers
// whatever the element type, and no address space holds more.
inline constexpr std::int64_t kMaxSpanElements = std::int64_t{1} << 48;

struct Layout {
  Dims shape{1, 1, 1};
  Dims stride{1, 1, 1};

  // The layout with rows then columns packed densely, last axis fastest: [M*N, N, 1].
  static Layout row_major(const Dims& shape);
  // Batch outermost, axis 1 fastest: [M*N, 1, M].
  static Layout column_major(const Dims& shape);

  std::int64_t element_count() const;
  // One past the largest offset reached; 0 for an empty layout. Saturates at INT64_MAX.
  // @pre every stride is non-negative.
  //   [2, 4, 4]:[40, 8, 1] -> 40 + 24 + 3 + 1 = 68;  [2, 4, 4]:[0, 4, 1] -> 16
  std::int64_t span() const;
  // The layout rule of a graph's tensors and a call's outputs (tensor_aliasing and
  // output_aliasing): walking the axes by increasing stride, each axis of extent > 1 has a
  // stride that clears the span of the axes before it. Such a layout reaches every offset
  // from one index tuple only. It is stricter than injective: an interleaved layout such as
  // [1, 3, 2]:[6, 2, 3] reaches six distinct offsets and is still refused, as is any
  // negative stride on an axis of extent > 1.
  //   [1, 4, 4]:[16, 4, 1] yes;  [1, 4, 4]:[16, 2, 1] no;  [2, 4, 4]:[0, 4, 1] no
  bool is_injective() const;
  // The first axis (by increasing stride) that breaks is_injective(), or -1 when none does.
  int overlapping_axis() const;
  // The axis of extent > 1 with stride 1, or -1 when none is (a broadcast or scalar
  // layout has none; a dense [b, 1, 1] has axis 0).
  int contiguous_axis() const;
  // Axis i of the result is axis perm[i] of this layout.
  Layout permuted(const std::array<int, kRank>& perm) const;

  bool operator==(const Layout&) const = default;
};

// "[2, 64, 32]" — the notation every message uses for dims and strides.
std::string to_string(const Dims& dims);
// "[2, 64, 32]:[2048, 32, 1]"
std::string to_string(const Layout& layout);

}  // namespace fusedgemm
