#include "runtime/seeds.h"

#include <array>
#include <utility>

namespace fusedgemm::runtime {
namespace {

struct Axis {
  std::int64_t extent;
  std::int64_t stride;
};

}  // namespace

SeedPlan plan_seed(void* data, const Layout& layout, std::uint32_t word) noexcept {
  // Axes that matter, innermost (smallest stride) first, dense neighbours merged.
  std::array<Axis, kRank> axes{};
  int n = 0;
  for (int i = 0; i < kRank; ++i) {
    if (layout.shape[i] > 1) axes[n++] = {layout.shape[i], layout.stride[i]};
  }
  // Three axes at most: an insertion sort, which also keeps GCC's bounds analysis quiet.
  for (int i = 1; i < n; ++i) {
    for (int j = i; j > 0 && axes[j].stride < axes[j - 1].stride; --j) {
      std::swap(axes[j], axes[j - 1]);
    }
  }
  int merged = 0;
  for (int i = 0; i < n; ++i) {
    if (merged > 0 && axes[merged - 1].stride * axes[merged - 1].extent == axes[i].stride) {
      axes[merged - 1].extent *= axes[i].extent;
    } else {
      axes[merged++] = axes[i];
    }
  }

  SeedPlan plan;
  plan.fill.data = data;
  plan.fill.word = word;
  plan.fill.width_words = 1;
  plan.fill.height = 1;
  plan.fill.pitch_bytes = 4;
  int next = 0;
  if (next < merged && axes[next].stride == 1) plan.fill.width_words = axes[next++].extent;
  plan.fill.pitch_bytes = plan.fill.width_words * 4;
  if (next < merged) {
    // The tallest remaining axis is the fill's height: every other axis costs one fill per
    // index, so this leaves the fewest fills.
    int tallest = next;
    for (int i = next + 1; i < merged; ++i) {
      if (axes[i].extent > axes[tallest].extent) tallest = i;
    }
    std::swap(axes[next], axes[tallest]);
    plan.fill.height = axes[next].extent;
    plan.fill.pitch_bytes = axes[next].stride * 4;
    ++next;
  }
  for (int r = 0; r < 2 && next < merged; ++r, ++next) {
    plan.repeat[r] = axes[next].extent;
    plan.repeat_stride_bytes[r] = axes[next].stride * 4;
  }
  return plan;
}

Status issue_seed(Device& device, const SeedPlan& plan, Stream stream) noexcept {
  auto* base = static_cast<std::uint8_t*>(plan.fill.data);
  for (std::uint64_t i = 0; i < plan.repeat[1]; ++i) {
    for (std::uint64_t j = 0; j < plan.repeat[0]; ++j) {
      Fill32 fill = plan.fill;
      fill.data = base + i * plan.repeat_stride_bytes[1] + j * plan.repeat_stride_bytes[0];
      if (Status s = device.fill(fill, stream); !s) return s;
    }
  }
  return Status::ok();
}

}  // namespace fusedgemm::runtime
