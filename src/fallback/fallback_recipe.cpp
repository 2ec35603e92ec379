#include "fallback/fallback_recipe.h"

#include <algorithm>

#include <fmt/format.h>

#include "recipe/call_view.h"
#include "recipe/limits.h"

namespace fusedgemm::fallback {
namespace {
// Steps one plan runs: each is a kernel of the one translation unit NVRTC compiles for the
// plan, 256 of them in 10 s (2026-12-05, this VM); a graph of 20,000 would take an hour.
constexpr std::size_t kMaxSteps = 512;
}  // namespace

Result<recipe::Recipe> make_recipe(const Program& program) {
  FG_CHECK(program.steps.size() <= kMaxSteps, ErrorCode::kUnavailable,
           fmt::format("fallback_step_count: graph '{}' plans {} steps (matmuls, pointwise "
                       "operations, reductions); legal: at most {}",
                       program.graph_name, program.steps.size(), kMaxSteps));
  FG_CHECK(program.buffers.size() <= static_cast<std::size_t>(recipe::kMaxRoles),
           ErrorCode::kUnavailable,
           fmt::format("fallback_buffer_count: graph '{}' has {} caller buffers (inputs and "
                       "outputs); legal: at most {}",
                       program.graph_name, program.buffers.size(), recipe::kMaxRoles));
  recipe::Recipe r;
  auto problem = std::make_shared<fusion::FusionProgram>();
  problem->graph_name = program.graph_name;
  problem->problem.batch = program.batch;
  r.program = std::move(problem);
  r.engine_workspace_bytes = program.workspace_bytes;
  for (std::size_t i = 0; i < program.buffers.size(); ++i) {
    const Buffer& b = program.buffers[i];
    r.slots.push_back({b.uid, b.name, static_cast<int>(i)});
    recipe::RoleFacts role;
    role.role = b.role;
    role.kind = recipe::ParamKind::kBuffer;
    role.index = static_cast<int>(i);
    role.slot = static_cast<int>(i);
    role.name = b.name;
    role.data_type = b.type;
    role.declared = b.declared;
    role.shape[0] = {recipe::Extent::kBatch};
    for (int axis = 1; axis < kRank; ++axis) {
      role.shape[axis] = {recipe::Extent::kFixed, 1, b.declared.shape[axis]};
    }
    role.batch = b.declared.shape[0] == program.batch ? recipe::BatchRule::kFull
                                                      : recipe::BatchRule::kBroadcast;
    role.alignment_bytes = std::max<std::int64_t>(1, recipe::bytes_of(b.type, 1));
    role.written = b.written;
    r.roles.push_back(std::move(role));
  }
  return r;
}

}  // namespace fusedgemm::fallback
