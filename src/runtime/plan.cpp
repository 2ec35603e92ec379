// The public Plan: thin forwarding to PlanState, where the one execute path lives.
#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "recipe/print.h"
#include "recipe/rules.h"
#include "recipe/workspace.h"
#include "runtime/plan_state.h"

namespace fusedgemm {

std::string_view to_string(Engine engine) {
  return engine == Engine::kFused ? "fused" : "fallback";
}

Engine Plan::engine() const {
  return state_->engine;
}
const std::optional<Decline>& Plan::declined() const {
  return state_->declined;
}
std::uint64_t Plan::workspace_bytes() const {
  return recipe::workspace_bytes(state_->recipe, state_->recipe.program->problem);
}
Result<std::uint64_t> Plan::workspace_bytes(const BoundPack& pack) const {
  return state_->workspace_bytes(pack);
}
const Device& Plan::device() const {
  return *state_->device;
}

Result<BoundPack> Plan::bind(const VariantPack& pack) const {
  return state_->bind(pack);
}

Result<std::size_t> Plan::slot_of(std::int64_t uid) const {
  auto it = state_->slot_by_uid.find(uid);
  if (it == state_->slot_by_uid.end()) {
    return Status(ErrorCode::kNotFound, fmt::format("plan has no tensor with uid {}", uid));
  }
  return static_cast<std::size_t>(it->second);
}

Status Plan::execute(const BoundPack& pack, const Workspace& workspace, void* stream) const {
  return state_->execute(pack, workspace, stream);
}

Status Plan::execute(const VariantPack& pack, const Workspace& workspace, void* stream) const {
  FG_ASSIGN_OR_RETURN(const BoundPack bound, state_->bind(pack));
  return state_->execute(bound, workspace, stream);
}

Verdict Plan::explain(const BoundPack& pack, const Workspace& workspace) const {
  return state_->explain(pack, workspace);
}

Verdict Plan::explain(const VariantPack& pack, const Workspace& workspace) const {
  auto bound = state_->bind(pack);
  if (!bound) {
    const Status status = bound.status();
    const std::string& m = status.message();
    return {m.substr(0, m.find(':')), m};
  }
  return state_->explain(bound.value(), workspace);
}

std::vector<DeferralCount> Plan::deferrals() const {
  std::vector<DeferralCount> counts;
  const auto table = recipe::rule_table();
  for (int row : state_->call_rows) {
    counts.push_back({table[row].id, state_->deferrals[row].load(std::memory_order_relaxed)});
  }
  return counts;
}

std::string Plan::describe() const {
  std::string out = fmt::format("engine: {}\n", to_string(state_->engine));
  if (state_->declined)
    out += fmt::format("declined by the fused engine: {}\n", state_->declined->message);
  out += recipe::to_string(state_->recipe);
  if (state_->runner) out += state_->runner->describe();
  return out;
}

}  // namespace fusedgemm
