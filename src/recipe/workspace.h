// The workspace a call needs, and where each tap's share of it lies: the ONE statement of
// its size, read by the `workspace` call rule, by Plan::workspace_bytes and by the kernel
// arguments (KernelArgs::taps), so none of them can drift from another.
//
// First the values of an unfused engine (Recipe::engine_workspace_bytes; 0 for a fused
// plan), then per tap, in argument-plan order, each section starting on a 16-byte boundary:
//   counters: one 64-bit arrival word per reduction group (kernels/tap_commit.cuh says how
//             they need no zeroing)
//   partials: groups x group_ctas slots of slot_floats fp32 each, one per epilogue unit (a
//             consumer warpgroup's half of a CTA tile, KernelConfig::unit_m x unit_n; "CTA"
//             below means the unit): unit_m (a tap reducing N), unit_n (reducing M), 1
//             (reducing M and N) or unit_m x unit_n (reducing only the batch)
// A reduction group is the set of units reducing into the same tap elements: along each
// unit axis (batch, ceil(M / unit_m), ceil(N / unit_n)) where the tap's call extent is 1
// they are one group, along the others they are apart.
// Then, where the call splits K (recipe::k_split, S > 1; kernels/split_k.cuh), for the
// epilogue units of the tiles that split (cluster tiles x CTAs x units per CTA tile):
//   counters: one 64-bit arrival word per unit
//   partials: per unit, S slots of gemms x unit_m x unit_n fp32
// The taps' part is required (the workspace rule refuses a call without it); the split's is
// optional: a call whose workspace does not hold it runs unsplit. A fused plan without taps
// whose calls fill the device: 0 bytes.
#pragma once

#include <array>
#include <cstdint>

#include "fusion/fusion_program.h"
#include "kernels/kernel_args.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"

namespace fusedgemm::recipe {

// The workspace's base alignment: its counters are 64-bit words, its sections 16-byte
// aligned.
inline constexpr std::uint64_t kWorkspaceAlignmentBytes = 16;

struct TapWorkspaceLayout {
  int role = -1;                     // the tap's role (kernel parameter)
  std::uint64_t counters_bytes = 0;  // offset of its counters from the workspace base
  std::uint64_t partials_bytes = 0;  // offset of its partial slots
  std::uint64_t groups = 0;
  std::uint64_t group_ctas = 0;
  std::uint64_t slot_floats = 0;
};

// The call's split (recipe::k_split: splits, first, tiles; splits 1: K is not split) and
// where its part of the workspace lies.
struct SplitWorkspaceLayout : KSplit {
  std::uint64_t counters_bytes = 0;  // offset of the units' counters from the workspace base
  std::uint64_t partials_bytes = 0;  // offset of their partial slots
};

struct WorkspaceLayout {
  int tap_count = 0;
  std::array<TapWorkspaceLayout, kernels::kMaxKernelBuffers> taps{};
  SplitWorkspaceLayout split;
  std::uint64_t required_bytes = 0;  // the engine's and the taps' part: the workspace rule's
  std::uint64_t bytes = 0;           // with the split's part: what Plan::workspace_bytes says
  std::uint64_t largest_group_ctas = 0;
};

// Where every tap's counters and partials lie for a call of `problem`.
WorkspaceLayout workspace_layout(const Recipe& recipe,
                                 const fusion::ProblemShape& problem) noexcept;

// workspace_layout(recipe, problem).bytes.
std::uint64_t workspace_bytes(const Recipe& recipe, const fusion::ProblemShape& problem) noexcept;

// Whether a call with this workspace splits K: its layout splits and the workspace holds
// the split's part too (and is aligned).
bool splits_k(const WorkspaceLayout& layout, const void* workspace,
              std::uint64_t workspace_bytes) noexcept;

// The workspace bytes the call's kernel reads and writes: all of them where it splits K,
// else the required part.
std::uint64_t used_workspace_bytes(const WorkspaceLayout& layout, const void* workspace,
                                   std::uint64_t workspace_bytes) noexcept;

}  // namespace fusedgemm::recipe
