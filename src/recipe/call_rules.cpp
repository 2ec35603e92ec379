#include "recipe/call_rules.h"

#include <cstdint>

#include <fmt/format.h>

#include "recipe/limits.h"
#include "recipe/workspace.h"

namespace fusedgemm::recipe::call_rules {
namespace {

// Axis names in kernel order, for messages.
std::string_view axis_name(const RoleFacts& role, int kernel_axis) {
  switch (role.shape[kernel_axis].source) {
    case Extent::kBatch: return "batch";
    case Extent::kM: return "M";
    case Extent::kN: return "N";
    case Extent::kK: return "K";
    case Extent::kFixed: {
      static constexpr std::string_view kDeclared[] = {"dim 0", "dim 1", "dim 2"};
      return kDeclared[kernel_axis];
    }
    case Extent::kOne: break;
  }
  static constexpr std::string_view kOperandA[] = {"batch", "M", "K"};
  static constexpr std::string_view kOperandB[] = {"batch", "N", "K"};
  static constexpr std::string_view kProblem[] = {"batch", "M", "N"};
  if (role.role == Role::kA) return kOperandA[kernel_axis];
  if (role.role == Role::kB) return kOperandB[kernel_axis];
  return kProblem[kernel_axis];
}

std::string who(const RoleFacts& role) {
  return fmt::format("role {} '{}'", to_string(role.role), role.name);
}

std::string seen(const RoleLayout& rv) {
  return to_string(rv.given);
}

template <class Pred>
int first_role(const CallView& view, Pred pred) noexcept {
  for (int i = 0; i < view.layout->role_count; ++i) {
    if (pred(i)) return i;
  }
  return -1;
}

std::string problem_str(const fusion::ProblemShape& p) {
  return fmt::format("batch {} M {} N {} K {}", p.batch, p.m, p.n, p.k);
}

bool is_tap(const RoleFacts& role) {
  return role.role == Role::kTap;
}
bool is_aux(const RoleFacts& role) {
  return role.kind == ParamKind::kAux;
}
bool is_scale(const RoleFacts& role) {
  return role.kind == ParamKind::kOperandScale || role.kind == ParamKind::kQuantizedScale;
}

// The first kernel axis (after the batch, which the batch rule checks) whose extent is not
// the call's, or is not positive: the roles that fix the problem (the first A and B) match
// their own extents, and a TMA global dimension is never 0 (cuTensorMapEncodeTiled).
int bad_extent_axis(const RoleFacts& role, const RoleLayout& rv, const fusion::ProblemShape& p) {
  for (int axis = 1; axis < kRank; ++axis) {
    if (rv.kernel.shape[axis] < 1 ||
        rv.kernel.shape[axis] != expected_extent(role.shape[axis], p)) {
      return axis;
    }
  }
  return -1;
}

// Checked in elements against the 16-byte modulus, as the support gate does: an odd fp4
// stride is half a byte, which counting whole bytes would round away. TMA strides are
// unsigned, so a negative one is never legal.
int misaligned_stride_axis(const RoleFacts& role, const RoleLayout& rv) {
  for (int axis = 0; axis < kRank; ++axis) {
    if (axis == role.contiguous_axis || rv.kernel.shape[axis] <= 1) continue;
    const std::int64_t stride = rv.kernel.stride[axis];
    if (stride < 0 || stride % contiguous_extent_modulus(role.data_type) != 0) return axis;
  }
  return -1;
}

// "136", or "31.5" for an fp4 stride that ends mid-byte.
std::string stride_bytes(DataType type, std::int64_t stride) {
  const std::int64_t bits = stride * bits_of(type);
  if (bits % 8 == 0) return fmt::format("{}", bits / 8);
  return fmt::format("{}{}.5", bits < 0 && bits / 8 == 0 ? "-" : "", bits / 8);
}

}  // namespace

// --- device_current ---------------------------------------------------------------------

int device_current_violation(const Recipe&, const CallView& view) noexcept {
  return view.plan_ordinal == view.current_ordinal ? -1 : 0;
}

std::string device_current_explain(const Recipe&, const CallView& view, int) {
  return fmt::format(
      "device_current: plan built for device {} but the current device is {}; "
      "legal: make device {} current before the call",
      view.plan_ordinal, view.current_ordinal, view.plan_ordinal);
}

// --- buffer_missing ---------------------------------------------------------------------

int buffer_missing_violation(const Recipe&, const CallView& view) noexcept {
  return first_role(view, [&](int i) { return view.data[i] == nullptr; });
}

std::string buffer_missing_explain(const Recipe& recipe, const CallView&, int role) {
  const auto& r = recipe.roles[role];
  return fmt::format(
      "buffer_missing: {}: no buffer (uid {}) in the variant pack, or a null "
      "address; legal: a buffer for every tensor of the plan",
      who(r), recipe.slots[r.slot].uid);
}

// --- view_rank --------------------------------------------------------------------------

// Aux views may drop leading axes ([N] is a bias of [1, 1, N]); other roles are rank 3.
int view_rank_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    const int rank = view.layout->roles[i].rank;
    return rank > kRank || rank < (is_aux(recipe.roles[i]) ? 1 : kRank);
  });
}

std::string view_rank_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  return fmt::format("view_rank: {}: view of rank {}; legal: rank {}", who(r),
                     view.layout->roles[role].rank, is_aux(r) ? "1, 2 or 3" : "3");
}

// --- data_type --------------------------------------------------------------------------

// A tap view of the wrong width is left to tap_element_width, which says why the width
// matters; one of the right width (int32 for an fp32 tap) must still be the declared type.
int data_type_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    const DataType t = view.layout->roles[i].data_type;
    if (t == DataType::kNotSet || t == recipe.roles[i].data_type) return false;
    return !is_tap(recipe.roles[i]) || bits_of(t) == bits_of(recipe.roles[i].data_type);
  });
}

std::string data_type_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  return fmt::format("data_type: {}: view says {}; legal: {} as declared", who(r),
                     to_string(view.layout->roles[role].data_type), to_string(r.data_type));
}

// --- tap_element_width ------------------------------------------------------------------

// The kernel accumulates taps with 32-bit atomics into the accumulator's type.
int tap_element_width_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    const DataType t = view.layout->roles[i].data_type;
    return is_tap(recipe.roles[i]) && t != DataType::kNotSet && bits_of(t) != 32;
  });
}

std::string tap_element_width_explain(const Recipe& recipe, const CallView& view, int role) {
  const DataType t = view.layout->roles[role].data_type;
  return fmt::format(
      "tap_element_width: {}: elements of {} bytes ({}); legal: 4-byte elements "
      "(fp32), the accumulator's width",
      who(recipe.roles[role]), bits_of(t) / 8.0, to_string(t));
}

// --- batch ------------------------------------------------------------------------------

int batch_violation(const Recipe& recipe, const CallView& view) noexcept {
  const std::int64_t b = view.layout->problem.batch;
  return first_role(view, [&](int i) {
    const std::int64_t got = view.layout->roles[i].kernel.shape[0];
    switch (recipe.roles[i].batch) {
      case BatchRule::kBroadcast: return got != 1;
      case BatchRule::kFull: return got != b;
      case BatchRule::kEither: return got != 1 && got != b;
    }
    return true;
  });
}

std::string batch_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const std::int64_t b = view.layout->problem.batch;
  const std::string legal = r.batch == BatchRule::kBroadcast ? "1 (declared as broadcast)"
                            : r.batch == BatchRule::kFull
                                ? fmt::format("{}, the call's batch", b)
                                : fmt::format("1 (broadcast) or {}, the call's batch", b);
  return fmt::format("batch: {}: batch {} in {}; legal: {}", who(r),
                     view.layout->roles[role].kernel.shape[0], seen(view.layout->roles[role]),
                     legal);
}

// --- extent -----------------------------------------------------------------------------

int extent_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    return !is_aux(recipe.roles[i]) &&
           bad_extent_axis(recipe.roles[i], view.layout->roles[i], view.layout->problem) >= 0;
  });
}

std::string extent_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto& rv = view.layout->roles[role];
  const int axis = bad_extent_axis(r, rv, view.layout->problem);
  const std::int64_t want = expected_extent(r.shape[axis], view.layout->problem);
  const std::string legal =
      rv.kernel.shape[axis] < 1 ? std::string("an extent of at least 1")
      : r.shape[axis].source == Extent::kFixed
          ? fmt::format("{}, the declared extent (the fallback engine runs the declared dims)",
                        want)
          : fmt::format("{} for the call's {}", want, problem_str(view.layout->problem));
  return fmt::format("extent: {}: {} {} in {} (kernel order {}); legal: {}", who(r),
                     axis_name(r, axis), rv.kernel.shape[axis], seen(rv),
                     to_string(rv.kernel.shape), legal);
}

// --- grid_extent ------------------------------------------------------------------------

namespace {
// CUDA grid limits (CUDA C++ Programming Guide, "Compute Capabilities"): the launch is
// (ceil(N / tile_n), ceil(M / tile_m), batch), and y and z are at most 65535.
constexpr std::int64_t kMaxGridYZ = 65535;
constexpr std::int64_t kMaxGridX = 2147483647;

std::int64_t tiles(std::int64_t extent, int tile) {
  return (extent + tile - 1) / tile;
}
}  // namespace

int grid_extent_violation(const Recipe& recipe, const CallView& view) noexcept {
  const auto& p = view.layout->problem;
  const bool ok = tiles(p.n, recipe.config.tile_n) <= kMaxGridX &&
                  tiles(p.m, recipe.config.tile_m) <= kMaxGridYZ && p.batch <= kMaxGridYZ;
  return ok ? -1 : 0;
}

std::string grid_extent_explain(const Recipe& recipe, const CallView& view, int) {
  const auto& p = view.layout->problem;
  return fmt::format(
      "grid_extent: the call's {} needs a grid of ({}, {}, {}) CTAs of {}x{}; "
      "legal: M <= {} and batch <= {}",
      problem_str(p), tiles(p.n, recipe.config.tile_n), tiles(p.m, recipe.config.tile_m), p.batch,
      recipe.config.tile_m, recipe.config.tile_n, kMaxGridYZ * recipe.config.tile_m, kMaxGridYZ);
}

// --- aux_broadcast ----------------------------------------------------------------------

int aux_broadcast_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    return is_aux(recipe.roles[i]) &&
           bad_extent_axis(recipe.roles[i], view.layout->roles[i], view.layout->problem) >= 0;
  });
}

std::string aux_broadcast_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto& rv = view.layout->roles[role];
  const int axis = bad_extent_axis(r, rv, view.layout->problem);
  return fmt::format(
      "aux_broadcast: {}: {} extent {} in {} for a {} broadcast; legal: dims [*, "
      "{}, {}] for the call's {}",
      who(r), axis == 1 ? "M" : "N", rv.kernel.shape[axis], seen(rv),
      fusion::to_string(r.broadcast), expected_extent(r.shape[1], view.layout->problem),
      expected_extent(r.shape[2], view.layout->problem), problem_str(view.layout->problem));
}

// --- major ------------------------------------------------------------------------------

int major_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    const int axis = recipe.roles[i].contiguous_axis;
    const auto& k = view.layout->roles[i].kernel;
    return axis >= 0 && k.shape[axis] > 1 && k.stride[axis] != 1;
  });
}

std::string major_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto& rv = view.layout->roles[role];
  return fmt::format(
      "major: {}: {} stride {} in {}; legal: unit stride on {} (the plan was "
      "built {}-major)",
      who(r), axis_name(r, r.contiguous_axis), rv.kernel.stride[r.contiguous_axis], seen(rv),
      axis_name(r, r.contiguous_axis), axis_name(r, r.contiguous_axis));
}

// --- contiguous_extent ------------------------------------------------------------------

int contiguous_extent_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    const auto& r = recipe.roles[i];
    return r.contiguous_axis >= 0 &&
           view.layout->roles[i].kernel.shape[r.contiguous_axis] % r.contiguous_modulus != 0;
  });
}

std::string contiguous_extent_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto extent = view.layout->roles[role].kernel.shape[r.contiguous_axis];
  return fmt::format(
      "contiguous_extent: {}: contiguous {} extent {} is not a multiple of {}; "
      "legal: {} a multiple of {} ({} bytes of {}, one TMA granule)",
      who(r), axis_name(r, r.contiguous_axis), extent, r.contiguous_modulus,
      axis_name(r, r.contiguous_axis), r.contiguous_modulus, kTmaGranuleBytes,
      to_string(r.data_type));
}

// --- stride_alignment -------------------------------------------------------------------

int stride_alignment_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    return recipe.roles[i].tma &&
           misaligned_stride_axis(recipe.roles[i], view.layout->roles[i]) >= 0;
  });
}

std::string stride_alignment_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto& rv = view.layout->roles[role];
  const int axis = misaligned_stride_axis(r, rv);
  return fmt::format(
      "stride_alignment: {}: {} stride {} elements = {} bytes in {}; legal: "
      "non-negative strides, non-unit ones a multiple of {} bytes ({} elements "
      "of {})",
      who(r), axis_name(r, axis), rv.kernel.stride[axis],
      stride_bytes(r.data_type, rv.kernel.stride[axis]), seen(rv), kTmaGranuleBytes,
      contiguous_extent_modulus(r.data_type), to_string(r.data_type));
}

// --- alignment --------------------------------------------------------------------------

int alignment_violation(const Recipe& recipe, const CallView& view) noexcept {
  // Alignments are powers of two (recipe.cpp), so a mask replaces a division per role.
  return first_role(view, [&](int i) {
    const auto mask = static_cast<std::uintptr_t>(recipe.roles[i].alignment_bytes - 1);
    return (reinterpret_cast<std::uintptr_t>(view.data[i]) & mask) != 0;
  });
}

std::string alignment_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto address = reinterpret_cast<std::uintptr_t>(view.data[role]);
  return fmt::format(
      "alignment: {}: address {:#x} is {} bytes past a {}-byte boundary; legal: "
      "a base address aligned to {} bytes",
      who(r), address, address % r.alignment_bytes, r.alignment_bytes, r.alignment_bytes);
}

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

int buffer_overlap_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    return recipe.roles[i].written && view.data[i] != nullptr &&
           overlapped_by(recipe, view, i) >= 0;
  });
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

// --- layout_group -----------------------------------------------------------------------

namespace {
// The first member of a group whose layout differs from the group's first, or -1.
int group_breaker(const std::vector<int>& group, const CallView& view) noexcept {
  for (std::size_t j = 1; j < group.size(); ++j) {
    if (!(view.layout->roles[group[j]].kernel == view.layout->roles[group[0]].kernel))
      return group[j];
  }
  return -1;
}
}  // namespace

int layout_group_violation(const Recipe& recipe, const CallView& view) noexcept {
  for (const auto& group : recipe.layout_groups) {
    if (const int role = group_breaker(group, view); role >= 0) return role;
  }
  return -1;
}

std::string layout_group_explain(const Recipe& recipe, const CallView& view, int role) {
  for (const auto& group : recipe.layout_groups) {
    if (group_breaker(group, view) != role) continue;
    const auto& first = recipe.roles[group[0]];
    return fmt::format(
        "layout_group: {}: layout {} but {} has {}; legal: the {} operands of "
        "every matmul share one layout (one kernel walks them together)",
        who(recipe.roles[role]), seen(view.layout->roles[role]), who(first),
        seen(view.layout->roles[group[0]]), to_string(first.role));
  }
  return "layout_group: no group broken";
}

// --- scale_layout -----------------------------------------------------------------------

// Block scales are read as one dense run (any axis order): TMA and the host index them by
// offset, and a padded scale buffer would be read out of step.
int scale_layout_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    const auto& g = view.layout->roles[i].given;
    return is_scale(recipe.roles[i]) && (!g.is_injective() || g.span() != g.element_count());
  });
}

std::string scale_layout_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& g = view.layout->roles[role].given;
  return fmt::format(
      "scale_layout: {}: layout {} spans {} elements for {} scales; legal: one "
      "dense run ({} elements, {} bytes)",
      who(recipe.roles[role]), to_string(g), g.span(), g.element_count(), g.element_count(),
      bytes_of(recipe.roles[role].data_type, g.element_count()));
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
    taps += fmt::format("{}'{}' {} group(s) of {} CTA(s)", t == 0 ? "" : ", ",
                        recipe.roles[tap.role].name, tap.groups, tap.group_ctas);
  }
  return fmt::format(
      "workspace: workspace of {} bytes at {} for a call of {} (taps: {}); needed: {} bytes; "
      "legal: at least the {} bytes Plan::workspace_bytes(pack) gives, {}-byte aligned, with "
      "at most {} CTAs per tap reduction group",
      view.workspace_bytes, view.workspace, problem_str(view.layout->problem), taps, needed.bytes,
      needed.bytes, kWorkspaceAlignmentBytes, kMaxTapGroupCtas);
}

}  // namespace fusedgemm::recipe::call_rules
