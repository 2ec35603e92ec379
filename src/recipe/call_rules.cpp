#include "recipe/call_rules.h"

#include <cstdint>

#include <fmt/format.h>

#include "graph/checked_math.h"
#include "recipe/call_rules_detail.h"

namespace fusedgemm::recipe::call_rules {

namespace detail {

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

std::string problem_str(const fusion::ProblemShape& p) {
  return fmt::format("batch {} M {} N {} K {}", p.batch, p.m, p.n, p.k);
}

}  // namespace detail

using detail::axis_name;
using detail::first_role;
using detail::is_aux;
using detail::is_tap;
using detail::problem_str;
using detail::seen;
using detail::who;

namespace {

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

// --- read_only --------------------------------------------------------------------------

int read_only_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(
      view, [&](int i) { return recipe.roles[i].written && view.layout->roles[i].read_only; });
}

std::string read_only_explain(const Recipe& recipe, const CallView&, int role) {
  return fmt::format(
      "read_only: {}: its buffer is read-only (a read-only array); legal: writable memory for "
      "every output, tap and quantized output",
      who(recipe.roles[role]));
}

// --- view_rank --------------------------------------------------------------------------

// Aux views may drop leading axes ([N] is a bias of [1, 1, N], a rank-0 view a scalar);
// other roles are rank 3. The role, not the parameter kind: the fallback engine's aux inputs
// are buffers of role aux.
int view_rank_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    const int rank = view.layout->roles[i].rank;
    return rank > kRank || rank < (recipe.roles[i].role == Role::kAux ? 0 : kRank);
  });
}

std::string view_rank_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  return fmt::format("view_rank: {}: view of rank {}; legal: rank {}", who(r),
                     view.layout->roles[role].rank, r.role == Role::kAux ? "0 to 3" : "3");
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
    const Layout& kernel = view.layout->roles[i].kernel;
    const std::int64_t got = kernel.shape[0];
    switch (recipe.roles[i].batch) {
      // An input's batch of stride 0 is one batch whatever its extent (kernel_arg_layout):
      // PyTorch's expand of a batch-1 tensor to the call's batch.
      case BatchRule::kBroadcast:
        return got != 1 && !(!recipe.roles[i].written && kernel.stride[0] == 0 && got == b);
      case BatchRule::kFull: return got != b;
      case BatchRule::kEither: return got != 1 && got != b;
    }
    return true;
  });
}

std::string batch_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const std::int64_t b = view.layout->problem.batch;
  const std::string legal =
      r.batch == BatchRule::kBroadcast
          ? (is_tap(r)   ? std::string("1 (the tap reduces over the batch)")
             : r.written ? std::string("1, as declared")
                         : fmt::format("1 (declared as broadcast), or {} of stride 0", b))
      : r.batch == BatchRule::kFull || b == 1
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
// The persistent grid walks batch x ceil(M / tile_m) x ceil(N / tile_n) tiles by a 64-bit
// index (kernels/tile_scheduler.cuh), and TMA takes 32-bit signed coordinates: every tile's
// last row and column, and the batch, must fit them.
constexpr std::int64_t kMaxCoordinate = 2147483647;
constexpr std::int64_t kMaxTileIndex = std::int64_t{1} << 62;

std::int64_t tiles(std::int64_t extent, int tile) {
  return extent <= 0 ? 0 : ceil_div(extent, tile);
}

bool grid_fits(const Recipe& recipe, const fusion::ProblemShape& p) {
  const auto& c = recipe.config;
  if (p.m > kMaxCoordinate - c.tile_m || p.n > kMaxCoordinate - c.tile_n ||
      p.batch > kMaxCoordinate) {
    return false;
  }
  const std::int64_t per_batch = saturating_mul(tiles(p.m, c.tile_m), tiles(p.n, c.tile_n));
  return per_batch == 0 || p.batch <= kMaxTileIndex / per_batch;
}
}  // namespace

int grid_extent_violation(const Recipe& recipe, const CallView& view) noexcept {
  return grid_fits(recipe, view.layout->problem) ? -1 : 0;
}

std::string grid_extent_explain(const Recipe& recipe, const CallView& view, int) {
  const auto& p = view.layout->problem;
  const auto& c = recipe.config;
  return fmt::format(
      "grid_extent: the call's {} has ({}, {}, {}) tiles of {}x{}; legal: M at most {} and N at "
      "most {} (TMA coordinates are 32-bit), batch at most {}, and fewer than 2^62 tiles",
      problem_str(p), p.batch, tiles(p.m, c.tile_m), tiles(p.n, c.tile_n), c.tile_m, c.tile_n,
      kMaxCoordinate - c.tile_m, kMaxCoordinate - c.tile_n, kMaxCoordinate);
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

}  // namespace fusedgemm::recipe::call_rules
