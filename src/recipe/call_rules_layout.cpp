// The call rows about each role's layout and address: major, contiguous_extent,
// stride_alignment, tma_limits, alignment, scale_layout.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "graph/checked_math.h"
#include "recipe/call_rules.h"
#include "recipe/call_rules_detail.h"
#include "recipe/limits.h"
#include "recipe/tma_global.h"

namespace fusedgemm::recipe::call_rules {

using detail::axis_name;
using detail::first_role;
using detail::is_scale;
using detail::seen;
using detail::who;

namespace {

int misaligned_stride_axis(const RoleFacts& role, const RoleLayout& rv) {
  return recipe::misaligned_stride_axis(role.data_type, rv.kernel, role.contiguous_axis);
}

// "136", "31.5" for an fp4 stride that ends mid-byte, or "about 3.69e+19" for a stride
// whose bits pass 64-bit integers.
std::string stride_bytes(DataType type, std::int64_t stride) {
  std::int64_t bits = 0;
  if (__builtin_mul_overflow(stride, bits_of(type), &bits)) {
    return fmt::format("about {:.3g}", static_cast<double>(stride) * bits_of(type) / 8);
  }
  if (bits % 8 == 0) return fmt::format("{}", bits / 8);
  return fmt::format("{}{}.5", bits < 0 && bits / 8 == 0 ? "-" : "", bits / 8);
}

}  // namespace

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

// --- view_span --------------------------------------------------------------------------

namespace {
// Elements from a layout's lowest offset to its highest, saturated.
std::int64_t span_of(const Layout& l) {
  if (std::any_of(l.shape.begin(), l.shape.end(), [](auto e) { return e <= 0; })) return 0;
  const auto [low, high] = element_reach(l);
  return low == kSaturatedNegative ? kSaturated : saturating_add(saturating_add(high, -low), 1);
}
}  // namespace

// The kernel and the host device compute a view's addresses in 64-bit integers: a view
// whose span passes kMaxSpanElements would wrap them (a stride of 2^63 - 1 wrote below its
// base).
int view_span_violation(const Recipe&, const CallView& view) noexcept {
  return first_role(view,
                    [&](int i) { return span_of(view.layout->roles[i].given) > kMaxSpanElements; });
}

std::string view_span_explain(const Recipe& recipe, const CallView& view, int role) {
  const std::int64_t span = span_of(view.layout->roles[role].given);
  return fmt::format(
      "view_span: {}: {} spans {} elements; legal: at most {} (2^48), more than any device "
      "or host address space holds",
      who(recipe.roles[role]), seen(view.layout->roles[role]),
      span == kSaturated ? std::string("more than 2^63") : std::to_string(span), kMaxSpanElements);
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
      "stride_alignment: {}: {} stride {} elements = {} bytes in {}; legal: every stride but "
      "the unit stride of {} a positive multiple of {} bytes ({} elements of {}; a batch "
      "stride may be 0, a broadcast)",
      who(r), axis_name(r, axis), rv.kernel.stride[axis],
      stride_bytes(r.data_type, rv.kernel.stride[axis]), seen(rv), axis_name(r, r.contiguous_axis),
      kTmaGranuleBytes, contiguous_extent_modulus(r.data_type), to_string(r.data_type));
}

// --- tma_limits -------------------------------------------------------------------------

namespace {
// The descriptor the CUDA device would encode for this role (the host device reads through
// the same one), so the rule checks exactly what cuTensorMapEncodeTiled is given.
TmaGlobal descriptor_of(const RoleFacts& role, const RoleLayout& rv) {
  return tma_global(kernel_arg_layout(rv.kernel), tma_axes(role.contiguous_axis),
                    bits_of(role.data_type));
}
}  // namespace

int tma_limits_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    return recipe.roles[i].tma &&
           descriptor_of(recipe.roles[i], view.layout->roles[i]).fault != TmaFault::kNone;
  });
}

std::string tma_limits_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto& rv = view.layout->roles[role];
  const TmaGlobal g = descriptor_of(r, rv);
  const int axis = tma_axes(r.contiguous_axis)[g.fault_dim];
  const std::string seen_part =
      g.fault == TmaFault::kDimTooLarge
          ? fmt::format("{} extent {} is past 2^32", axis_name(r, axis), g.dims[g.fault_dim])
          : fmt::format("{} stride {} elements is {} bytes, past 2^40 - 1", axis_name(r, axis),
                        rv.kernel.stride[axis],
                        stride_bytes(r.data_type, g.stride_elems[g.fault_dim]));
  return fmt::format(
      "tma_limits: {}: {} in {}; legal: every extent at most {} and every byte stride at most "
      "{} (cuTensorMapEncodeTiled's globalDim and globalStrides)",
      who(r), seen_part, seen(rv), kMaxTmaDim, kMaxTmaStrideBytes);
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

// --- scale_layout -----------------------------------------------------------------------

// Block scales are read as one dense run (any axis order): TMA and the host index them by
// offset, and a padded scale buffer would be read out of step. An input's batch of stride 0
// is one batch (kernel_arg_layout, as the batch rule reads it): the run is one batch's.
Layout scale_run(const RoleFacts& role, const RoleLayout& layout) noexcept {
  return role.written ? layout.kernel : kernel_arg_layout(layout.kernel);
}

int scale_layout_violation(const Recipe& recipe, const CallView& view) noexcept {
  return first_role(view, [&](int i) {
    if (!is_scale(recipe.roles[i])) return false;
    const Layout run = scale_run(recipe.roles[i], view.layout->roles[i]);
    return !run.is_injective() || run.span() != run.element_count();
  });
}

std::string scale_layout_explain(const Recipe& recipe, const CallView& view, int role) {
  const auto& r = recipe.roles[role];
  const auto& g = view.layout->roles[role].given;
  const Layout run = scale_run(r, view.layout->roles[role]);
  const bool one_batch = run.element_count() != g.element_count();
  return fmt::format(
      "scale_layout: {}: layout {} spans {} elements for {} scales{}; legal: one dense run "
      "({} elements, {} bytes){}",
      who(r), to_string(g), run.span(), run.element_count(),
      one_batch ? " (one batch: its batch has stride 0)" : "", run.element_count(),
      bytes_of(r.data_type, run.element_count()),
      r.written || one_batch ? "" : "; a batch of stride 0 counts as one batch");
}

}  // namespace fusedgemm::recipe::call_rules
