// One call as the rules see it: per role, the buffer the caller gave, re-labelled from the
// graph's declared axis order into the kernel's, and the problem size the call implies.
// Built on the stack for every call; nothing here allocates.
#pragma once

#include <array>
#include <cstdint>

#include "fusedgemm/layout.h"
#include "fusedgemm/plan.h"
#include "kernels/kernel_args.h"
#include "recipe/recipe.h"
#include "recipe/workspace.h"

namespace fusedgemm::recipe {

// Roles one plan can have: a fused plan's are its kernel parameters (at most
// kernels::kMaxKernelBuffers, a build rule); a fallback plan's are its caller buffers.
inline constexpr int kMaxRoles = 32;

// Bytes from a base address: [low, high).
struct ByteReach {
  std::int64_t low = 0;
  std::int64_t high = 0;
};

// The element offsets a layout reaches from its base: [low, high], saturating (negative
// strides reach below it); {0, 0} when it is empty.
struct ElementReach {
  std::int64_t low = 0;
  std::int64_t high = 0;
};
ElementReach element_reach(const Layout& layout) noexcept;

// The bytes a layout of `type` elements reaches from its base; {0, 0} when it is empty.
ByteReach byte_reach(DataType type, const Layout& layout) noexcept;

// What a role's buffer looks like in one call. Fixed once a pack is bound.
struct RoleLayout {
  int rank = kRank;                        // as the caller gave it
  Layout given;                            // declared axis order, leading axes of extent 1 added
  Layout kernel;                           // kernel axis order
  DataType data_type = DataType::kNotSet;  // as the view said
  bool read_only = false;                  // as the buffer said
};

// Everything about a call that its buffers' layouts fix: computed when a pack is bound,
// not on every call, since a bound pack changes only its addresses.
struct CallLayout {
  fusion::ProblemShape problem;
  int role_count = 0;
  std::array<RoleLayout, kMaxRoles> roles;
  // The bytes each role's elements reach, [low, high) from its base (low < 0 where a
  // negative stride reads below it), saturating; kept apart from `roles` so the per-call
  // overlap check walks one small array.
  std::array<ByteReach, kMaxRoles> reach{};
  // Where the taps' counters and partials lie for this problem, and the bytes they need.
  WorkspaceLayout workspace;
};

// One call: the bound layouts plus what changes every call.
struct CallView {
  const CallLayout* layout = nullptr;
  // Per role, the first layout->role_count entries (resolve_addresses fills them); null
  // where the pack has none. Not zeroed: the view is built on every call.
  std::array<const void*, kMaxRoles> data;
  const void* workspace = nullptr;
  std::uint64_t workspace_bytes = 0;
  int plan_ordinal = 0;
  int current_ordinal = 0;
};

// Re-labels every role of `pack` and derives the problem: M and K from the first A, N from
// the first B, batch the largest operand batch. A bare address reads as the declared
// layout. A view whose (shape, stride) equals the declaration, or whose K axis sits where
// the declaration puts it, reads in declared order (at N == K both readings fit; the
// declaration wins); otherwise in kernel order.
void resolve_layout(const Recipe& recipe, const BoundPack& pack, CallLayout& layout) noexcept;

// The per-call part: each role's address, the workspace and the devices.
void resolve_addresses(const Recipe& recipe, const BoundPack& pack, const Workspace& workspace,
                       int plan_ordinal, int current_ordinal, CallView& view) noexcept;

// The extent a role's axis must have in this call.
std::int64_t expected_extent(const AxisRule& rule, const fusion::ProblemShape& problem) noexcept;

}  // namespace fusedgemm::recipe
