#include "recipe/workspace.h"

#include "graph/checked_math.h"
#include "recipe/call_view.h"
#include "recipe/kernel_config.h"

namespace fusedgemm::recipe {
namespace {

std::uint64_t round_up(std::uint64_t bytes) {
  if (bytes > UINT64_MAX - kWorkspaceAlignmentBytes) return UINT64_MAX;
  return (bytes + kWorkspaceAlignmentBytes - 1) / kWorkspaceAlignmentBytes *
         kWorkspaceAlignmentBytes;
}

std::uint64_t tiles(std::int64_t extent, int tile) {
  return extent <= 0 ? 0 : static_cast<std::uint64_t>(ceil_div(extent, tile));
}

// a * b, saturating: a call's tiles can be any count until the grid_extent rule refuses it,
// and a saturated size then fails the workspace rule instead of wrapping to a small one.
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// The floats one unit's partial holds: what its warpgroup's reduction leaves (codegen's
// TapShape, from the axes the tap's declaration reduces).
std::uint64_t slot_floats(const RoleFacts& tap, const KernelConfig& config) {
  const bool m = tap.shape[1].source == Extent::kOne;
  const bool n = tap.shape[2].source == Extent::kOne;
  const auto tile_m = static_cast<std::uint64_t>(config.unit_m());
  const auto tile_n = static_cast<std::uint64_t>(config.unit_n());
  if (m && n) return 1;
  if (m) return tile_n;
  if (n) return tile_m;
  return tile_m * tile_n;
}

}  // namespace

WorkspaceLayout workspace_layout(const Recipe& recipe,
                                 const fusion::ProblemShape& problem) noexcept {
  WorkspaceLayout layout;
  const std::uint64_t grid[3] = {problem.batch <= 0 ? 0 : static_cast<std::uint64_t>(problem.batch),
                                 tiles(problem.m, recipe.config.unit_m()),
                                 tiles(problem.n, recipe.config.unit_n())};
  std::uint64_t bytes = round_up(recipe.engine_workspace_bytes);
  for (std::size_t i = 0; i < recipe.roles.size(); ++i) {
    const RoleFacts& r = recipe.roles[i];
    if (r.kind != ParamKind::kTap) continue;
    TapWorkspaceLayout& t = layout.taps[layout.tap_count++];
    t.role = static_cast<int>(i);
    t.groups = 1;
    t.group_ctas = 1;
    // The kernel tells the axes apart by the call's tap extents (kernels/tap_commit.cuh,
    // tap_group); an axis declared wider but 1 in this call has one tile either way.
    for (int axis = 0; axis < 3; ++axis) {
      auto& count = expected_extent(r.shape[axis], problem) == 1 ? t.group_ctas : t.groups;
      count = mul(count, grid[axis]);
    }
    t.slot_floats = slot_floats(r, recipe.config);
    t.counters_bytes = bytes;
    bytes = round_up(add(bytes, mul(t.groups, sizeof(std::uint64_t))));
    t.partials_bytes = bytes;
    bytes =
        round_up(add(bytes, mul(mul(mul(t.groups, t.group_ctas), t.slot_floats), sizeof(float))));
    if (t.group_ctas > layout.largest_group_ctas) layout.largest_group_ctas = t.group_ctas;
  }
  layout.required_bytes = bytes;
  // Split K: only a fused kernel splits (an unfused engine's config has no SM count).
  const KSplit split = recipe.engine_workspace_bytes == 0 && recipe.program
                           ? k_split(*recipe.program, recipe.config, problem)
                           : KSplit{};
  if (split.splits > 1) {
    const auto& c = recipe.config;
    const int units_per_tile = c.split == ConsumerSplit::kPingPong ? 1 : KernelConfig::kConsumers;
    const std::uint64_t units = mul(
        static_cast<std::uint64_t>(split.tiles),
        static_cast<std::uint64_t>(c.cluster_ctas()) * static_cast<std::uint64_t>(units_per_tile));
    const auto slot_floats =
        static_cast<std::uint64_t>(split_slot_floats(*recipe.program, recipe.config));
    static_cast<KSplit&>(layout.split) = split;
    layout.split.counters_bytes = bytes;
    bytes = round_up(add(bytes, mul(units, sizeof(std::uint64_t))));
    layout.split.partials_bytes = bytes;
    bytes = round_up(
        add(bytes, mul(mul(mul(units, static_cast<std::uint64_t>(split.splits)), slot_floats),
                       sizeof(float))));
  }
  layout.bytes = bytes;
  return layout;
}

bool splits_k(const WorkspaceLayout& layout, const void* workspace,
              std::uint64_t workspace_bytes) noexcept {
  return layout.split.splits > 1 && workspace != nullptr && workspace_bytes >= layout.bytes &&
         reinterpret_cast<std::uintptr_t>(workspace) % kWorkspaceAlignmentBytes == 0;
}

std::uint64_t used_workspace_bytes(const WorkspaceLayout& layout, const void* workspace,
                                   std::uint64_t workspace_bytes) noexcept {
  return splits_k(layout, workspace, workspace_bytes) ? layout.bytes : layout.required_bytes;
}

std::uint64_t workspace_bytes(const Recipe& recipe, const fusion::ProblemShape& problem) noexcept {
  return workspace_layout(recipe, problem).bytes;
}

}  // namespace fusedgemm::recipe
