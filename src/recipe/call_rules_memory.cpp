// The call rows about the memory a call writes: buffer_overlap, output_aliasing, workspace.
#include <array>
#include <bit>
#include <cstdint>
#include <span>

#include <fmt/format.h>

#include "recipe/call_rules.h"
#include "recipe/call_rules_detail.h"
#include "recipe/range_sweep.h"
#include "recipe/workspace.h"

namespace fusedgemm::recipe::call_rules {

using detail::first_role;
using detail::problem_str;
using detail::seen;
using detail::who;

// --- buffer_overlap ---------------------------------------------------------------------

namespace {

// Whether element offset `off` of a layout whose strides each clear the span of the axes
// below them (the injectivity rule) is reached: peel the largest strides first.
bool reaches(const Layout& layout, std::int64_t off) noexcept {
  std::array<int, kRank> order{0, 1, 2};
  for (int i = 1; i < kRank; ++i) {
    for (int j = i; j > 0 && layout.stride[order[j]] > layout.stride[order[j - 1]]; --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  for (int axis : order) {
    if (layout.shape[axis] <= 1 || layout.stride[axis] == 0) continue;
    const std::int64_t i = off / layout.stride[axis];
    if (i >= layout.shape[axis]) return false;
    off -= i * layout.stride[axis];
  }
  return off == 0;
}

// Enumerating the smaller layout bounds the exact test; past this many elements two
// overlapping ranges are refused without it.
constexpr std::int64_t kMaxExactElements = std::int64_t{1} << 22;

// Exact when both roles have one element width and their bases differ by whole elements;
// any other overlap of address ranges counts as sharing memory.
bool share_elements(const RoleFacts& ra, const RoleLayout& la, const void* a, const RoleFacts& rb,
                    const RoleLayout& lb, const void* b) noexcept {
  const int bits = bits_of(ra.data_type);
  if (bits != bits_of(rb.data_type) || bits < 8) return true;
  const std::int64_t width = bits / 8;
  const std::int64_t diff = reinterpret_cast<std::intptr_t>(b) - reinterpret_cast<std::intptr_t>(a);
  if (diff % width != 0) return true;
  const bool a_smaller = la.given.element_count() <= lb.given.element_count();
  const Layout& small = a_smaller ? la.given : lb.given;
  const Layout& large = a_smaller ? lb.given : la.given;
  const std::int64_t shift = (a_smaller ? diff : -diff) / width;  // large base - small base
  if (small.element_count() > kMaxExactElements) return true;
  for (std::int64_t i0 = 0; i0 < small.shape[0]; ++i0) {
    for (std::int64_t i1 = 0; i1 < small.shape[1]; ++i1) {
      for (std::int64_t i2 = 0; i2 < small.shape[2]; ++i2) {
        const std::int64_t off =
            i0 * small.stride[0] + i1 * small.stride[1] + i2 * small.stride[2] - shift;
        if (off >= 0 && reaches(large, off)) return true;
      }
    }
  }
  return false;
}

// An aux read in place of an output of the same layout is fine: each element is read by the
// thread that then writes it.
bool in_place(const RoleFacts& w, const RoleLayout& lw, const void* dw, const RoleFacts& r,
              const RoleLayout& lr, const void* dr) noexcept {
  return r.kind == ParamKind::kAux && dw == dr && w.data_type == r.data_type &&
         lw.kernel == lr.kernel;
}

// The first role whose memory written role `w` meets, or -1. Address ranges first, over
// one compact array: the exact test runs only for ranges that meet.
int overlapped_by(const Recipe& recipe, const CallView& view, int w) noexcept {
  const auto& spans = view.layout->span_bytes;
  const auto lo = reinterpret_cast<std::uintptr_t>(view.data[w]);
  const auto hi = lo + static_cast<std::uintptr_t>(spans[w]);
  for (int r = 0; r < view.layout->role_count; ++r) {
    const auto lo_r = reinterpret_cast<std::uintptr_t>(view.data[r]);
    if (hi <= lo_r || lo_r + static_cast<std::uintptr_t>(spans[r]) <= lo || r == w) continue;
    const auto& rw = recipe.roles[w];
    const auto& rr = recipe.roles[r];
    if (rr.slot == rw.slot || view.data[r] == nullptr) continue;
    const auto& lw = view.layout->roles[w];
    const auto& lr = view.layout->roles[r];
    if (in_place(rw, lw, view.data[w], rr, lr, view.data[r])) continue;
    if (share_elements(rw, lw, view.data[w], rr, lr, view.data[r])) return r;
  }
  return -1;
}

}  // namespace

// Runs every call, so the pairwise search (each written role against every role) runs only
// for the roles whose address ranges meet another's, found by one sort and sweep over the
// given buffers (range_sweep.h): apart buffers cost no exact test. Same verdict as the
// pairwise search over all roles: a role whose range meets none is overlapped by none, and
// the candidates are tried in role order. execute_bound/taps went from 206-233 ns to
// 153-171 ns (2-core CPU host, loaded, 2026-12-02).
int buffer_overlap_violation(const Recipe& recipe, const CallView& view) noexcept {
  static_assert(kMaxRoles <= 32,
                "meeting_roles keeps one bit per role: widen its mask for more than 32 roles");
  std::array<ByteRange, kMaxRoles> ranges;
  std::size_t count = 0;
  for (int i = 0; i < view.layout->role_count; ++i) {
    if (view.data[i] == nullptr) continue;  // never overlaps: the pairwise search skips it
    const auto lo = reinterpret_cast<std::uintptr_t>(view.data[i]);
    ranges[count++] = {lo, lo + static_cast<std::uintptr_t>(view.layout->span_bytes[i]), i};
  }
  for (std::uint32_t candidates = meeting_roles(std::span(ranges.data(), count)); candidates != 0;
       candidates &= candidates - 1) {
    const int i = std::countr_zero(candidates);
    if (recipe.roles[i].written && overlapped_by(recipe, view, i) >= 0) return i;
  }
  return -1;
}

std::string buffer_overlap_explain(const Recipe& recipe, const CallView& view, int role) {
  const int other = overlapped_by(recipe, view, role);
  return fmt::format(
      "buffer_overlap: {}: {} at {} shares memory with {} {} at {}; legal: "
      "written buffers disjoint from every other buffer (an aux may alias an "
      "output of the same layout, read in place)",
      who(recipe.roles[role]), seen(view.layout->roles[role]), view.data[role],
      who(recipe.roles[other]), seen(view.layout->roles[other]), view.data[other]);
}

// --- output_aliasing --------------------------------------------------------------------

int output_aliasing_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    return recipe.roles[i].written && !view.layout->roles[i].given.is_injective();
  });
}

std::string output_aliasing_explain(const Recipe& recipe, const CallView& view, int role) {
  return fmt::format(
      "output_aliasing: {}: layout {} reaches one element from two index tuples; "
      "legal: each axis's stride clears the span of the axes below it",
      who(recipe.roles[role]), seen(view.layout->roles[role]));
}

// --- workspace --------------------------------------------------------------------------

int workspace_violation(const Recipe&, const CallView& view) noexcept {
  const WorkspaceLayout& needed = view.layout->workspace;
  if (needed.bytes == 0) return -1;
  const bool fits =
      view.workspace != nullptr && view.workspace_bytes >= needed.bytes &&
      reinterpret_cast<std::uintptr_t>(view.workspace) % kWorkspaceAlignmentBytes == 0;
  return fits && needed.largest_group_ctas <= kMaxTapGroupCtas ? -1 : 0;
}

std::string workspace_explain(const Recipe& recipe, const CallView& view, int) {
  const WorkspaceLayout& needed = view.layout->workspace;
  std::string taps;
  for (int t = 0; t < needed.tap_count; ++t) {
    const auto& tap = needed.taps[t];
    taps += fmt::format("{}'{}' {} group(s) of {} unit(s)", t == 0 ? "" : ", ",
                        recipe.roles[tap.role].name, tap.groups, tap.group_ctas);
  }
  return fmt::format(
      "workspace: workspace of {} bytes at {} for a call of {} (taps: {}); needed: {} bytes; "
      "legal: at least the {} bytes Plan::workspace_bytes(pack) gives, {}-byte aligned, with "
      "at most {} epilogue units (consumer warpgroup tiles) per tap reduction group",
      view.workspace_bytes, view.workspace, problem_str(view.layout->problem), taps, needed.bytes,
      needed.bytes, kWorkspaceAlignmentBytes, kMaxTapGroupCtas);
}

}  // namespace fusedgemm::recipe::call_rules
