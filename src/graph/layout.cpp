#include "fusedgemm/layout.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace fusedgemm {

Layout Layout::row_major(const Dims& shape) {
  return {shape, {shape[1] * shape[2], shape[2], 1}};
}

Layout Layout::column_major(const Dims& shape) {
  return {shape, {shape[1] * shape[2], 1, shape[1]}};
}

std::int64_t Layout::element_count() const {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

std::int64_t Layout::span() const {
  std::int64_t last = 0;
  for (int i = 0; i < kRank; ++i) {
    if (shape[i] <= 0) return 0;
    last += (shape[i] - 1) * stride[i];
  }
  return last + 1;
}

bool Layout::is_injective() const {
  std::array<int, kRank> order{0, 1, 2};
  std::sort(order.begin(), order.end(), [&](int a, int b) { return stride[a] < stride[b]; });
  std::int64_t covered = 1;  // span of the axes already visited
  for (int axis : order) {
    if (shape[axis] <= 1) continue;
    if (stride[axis] < covered) return false;
    covered = stride[axis] * (shape[axis] - 1) + covered;
  }
  return true;
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

std::string to_string(const Dims& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

std::string to_string(const Layout& layout) {
  return fmt::format("{}:{}", to_string(layout.shape), to_string(layout.stride));
}

}  // namespace fusedgemm
