#include "fusedgemm/layout.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "graph/checked_math.h"

namespace fusedgemm {

Layout Layout::row_major(const Dims& shape) {
  return {shape, {shape[1] * shape[2], shape[2], 1}};
}

Layout Layout::column_major(const Dims& shape) {
  return {shape, {shape[1] * shape[2], 1, shape[1]}};
}

std::int64_t Layout::element_count() const {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, saturating_mul);
}

namespace {

constexpr std::int64_t kMaxOffset = kSaturated;

// a + b * c, saturating at kMaxOffset (extents and strides come from user input).
std::int64_t add_product(std::int64_t a, std::int64_t b, std::int64_t c) {
  return saturating_add(a, saturating_mul(b, c));
}

}  // namespace

std::int64_t Layout::span() const {
  std::int64_t last = 0;
  for (int i = 0; i < kRank; ++i) {
    if (shape[i] <= 0) return 0;
    last = add_product(last, shape[i] - 1, stride[i]);
  }
  return last == kMaxOffset ? last : last + 1;
}

int Layout::overlapping_axis() const {
  // An empty layout reaches no offset at all, so none twice.
  if (std::any_of(shape.begin(), shape.end(), [](std::int64_t e) { return e <= 0; })) return -1;
  // Axes by stride, ties in axis order: an insertion sort, because std::stable_sort takes a
  // heap buffer and this runs for every buffer of every bind.
  std::array<int, kRank> order{0, 1, 2};
  for (int i = 1; i < kRank; ++i) {
    for (int j = i; j > 0 && stride[order[j]] < stride[order[j - 1]]; --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  std::int64_t covered = 1;  // one past the span of the axes already visited
  for (int axis : order) {
    if (shape[axis] <= 1) continue;
    if (stride[axis] < covered) return axis;
    covered = add_product(covered, shape[axis] - 1, stride[axis]);
  }
  return -1;
}

bool Layout::is_injective() const {
  return overlapping_axis() < 0;
}

int Layout::contiguous_axis() const {
  for (int i = kRank - 1; i >= 0; --i) {
    if (shape[i] > 1 && stride[i] == 1) return i;
  }
  return -1;
}

Layout Layout::permuted(const std::array<int, kRank>& perm) const {
  Layout out;
  for (int i = 0; i < kRank; ++i) {
    out.shape[i] = shape[perm[i]];
    out.stride[i] = stride[perm[i]];
  }
  return out;
}

std::string to_string(const Dims& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

std::string to_string(const Layout& layout) {
  return fmt::format("{}:{}", to_string(layout.shape), to_string(layout.stride));
}

}  // namespace fusedgemm
