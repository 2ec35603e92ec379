#include "recipe/call_view.h"

#include <algorithm>

#include "graph/checked_math.h"
#include "recipe/limits.h"

namespace fusedgemm::recipe {
namespace {

bool is_identity(const std::array<int, kRank>& axes) {
  return axes[0] == 0 && axes[1] == 1 && axes[2] == 2;
}

// The caller's buffer as a rank-3 layout in declared order; shorter views align right (a
// rank-0 view is one element: [1, 1, 1]). A view of rank outside 0..3 reads as the
// declaration: the view_rank rule refuses it before anything reads the layout.
Layout given_layout(const RoleFacts& role, const BoundPack::Buffer& buffer) {
  if (!buffer.is_view || buffer.rank < 0 || buffer.rank > kRank) return role.declared;
  Layout layout;
  const int pad = kRank - buffer.rank;
  for (int i = 0; i < buffer.rank && i < kRank; ++i) {
    layout.shape[pad + i] = buffer.shape[i];
    layout.stride[pad + i] = buffer.stride[i];
  }
  // The added leading axes have extent 1: packed strides, saturated (any value is legal).
  for (int i = std::min(pad, kRank - 1) - 1; i >= 0; --i) {
    layout.stride[i] = saturating_mul(layout.stride[i + 1], layout.shape[i + 1]);
  }
  return layout;
}

// The kernel axis whose extent follows K, or -1.
int k_axis(const RoleFacts& role) {
  for (int i = 0; i < kRank; ++i) {
    if (role.shape[i].source == Extent::kK) return i;
  }
  return -1;
}

// Whether a buffer is read in declared axis order (and permuted into kernel order) rather
// than given in kernel order already.
bool reads_declared(const RoleFacts& role, const Layout& given, bool is_view,
                    std::int64_t problem_k) {
  if (!is_view || given == role.declared) return true;
  const int ka = k_axis(role);
  if (ka < 0 || problem_k < 0) return true;
  const std::int64_t k = expected_extent(role.shape[ka], {1, 1, 1, problem_k});
  const bool declared_fits = given.shape[role.kernel_axes[ka]] == k;
  const bool kernel_fits = given.shape[ka] == k;
  return !(kernel_fits && !declared_fits);
}

}  // namespace

std::int64_t expected_extent(const AxisRule& rule, const fusion::ProblemShape& p) noexcept {
  std::int64_t extent = 1;
  switch (rule.source) {
    case Extent::kOne: return 1;
    case Extent::kBatch: extent = p.batch; break;
    case Extent::kM: extent = p.m; break;
    case Extent::kN: extent = p.n; break;
    case Extent::kK: extent = p.k; break;
    case Extent::kFixed: return rule.fixed;
  }
  return extent <= 0 ? extent : ceil_div(extent, rule.divisor);
}

ElementReach element_reach(const Layout& layout) noexcept {
  ElementReach r;
  for (int i = 0; i < kRank; ++i) {
    if (layout.shape[i] <= 0) return {};
    const std::int64_t reach = saturating_mul(layout.shape[i] - 1, layout.stride[i]);
    (reach < 0 ? r.low : r.high) = saturating_add(reach < 0 ? r.low : r.high, reach);
  }
  return r;
}

ByteReach byte_reach(DataType type, const Layout& layout) noexcept {
  if (std::any_of(layout.shape.begin(), layout.shape.end(), [](auto e) { return e <= 0; })) {
    return {};
  }
  const auto [low, high] = element_reach(layout);
  // Element e covers bits [e * bits, (e + 1) * bits): floor and ceil to whole bytes.
  const std::int64_t bits = bits_of(type);
  const std::int64_t low_bits = saturating_mul(low, bits);
  return {low_bits == kSaturatedNegative ? low_bits : low_bits / 8 - (low_bits % 8 != 0),
          bytes_of(type, saturating_add(high, 1))};
}

void resolve_layout(const Recipe& recipe, const BoundPack& pack, CallLayout& layout) noexcept {
  layout.role_count = static_cast<int>(recipe.roles.size());
  layout.problem = recipe.program->problem;
  // Operands come first in the argument plan; A fixes M and K before any B is read.
  std::int64_t k = -1;
  bool have_m = false;
  bool have_n = false;
  std::int64_t batch = 1;
  int operands = 0;
  std::array<bool, kMaxRoles> operand_declared{};
  for (int i = 0; i < layout.role_count; ++i) {
    const RoleFacts& role = recipe.roles[i];
    const BoundPack::Buffer& buffer = pack[role.slot];
    RoleLayout& rl = layout.roles[i];
    rl.rank = buffer.is_view ? buffer.rank : kRank;
    rl.data_type = buffer.data_type;
    rl.read_only = buffer.read_only;
    rl.given = given_layout(role, buffer);
    // A block scale is read in the order its operand is read: its own block counts cannot
    // tell the orders apart wherever ceil(N / 128) == ceil(K / 128).
    bool declared = reads_declared(role, rl.given, buffer.is_view, k);
    if (role.kind == ParamKind::kOperand) {
      operand_declared[role.index] = declared;
    } else if (role.kind == ParamKind::kOperandScale && buffer.is_view &&
               !(rl.given == role.declared)) {
      declared = operand_declared[role.index];
    }
    rl.kernel =
        is_identity(role.kernel_axes) || !declared ? rl.given : rl.given.permuted(role.kernel_axes);
    layout.reach[i] = byte_reach(role.data_type, rl.given);
    if (role.kind != ParamKind::kOperand) continue;
    ++operands;
    batch = std::max(batch, rl.kernel.shape[0]);
    if (role.role == Role::kA && !have_m) {
      layout.problem.m = rl.kernel.shape[1];
      layout.problem.k = k = rl.kernel.shape[2];
      have_m = true;
    } else if (role.role == Role::kB && !have_n) {
      layout.problem.n = rl.kernel.shape[1];
      have_n = true;
    }
  }
  // A plan without operand roles (the fallback engine's) runs its declared batch.
  if (operands > 0) layout.problem.batch = batch;
  layout.workspace = workspace_layout(recipe, layout.problem);
}

void resolve_addresses(const Recipe& recipe, const BoundPack& pack, const Workspace& workspace,
                       int plan_ordinal, int current_ordinal, CallView& view) noexcept {
  const int roles = static_cast<int>(recipe.roles.size());
  for (int i = 0; i < roles; ++i) view.data[i] = pack[recipe.roles[i].slot].data;
  view.workspace = workspace.data;
  view.workspace_bytes = workspace.bytes;
  view.plan_ordinal = plan_ordinal;
  view.current_ordinal = current_ordinal;
}

}  // namespace fusedgemm::recipe
