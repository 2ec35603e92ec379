// What a Plan holds: the recipe, the loaded kernel and its device, immutable after build.
// The one execute implementation lives here; every public overload reaches it.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fusedgemm/plan.h"
#include "recipe/call_view.h"
#include "recipe/recipe.h"
#include "runtime/device.h"
#include "runtime/runner.h"

namespace fusedgemm::runtime {

struct PlanState;

// What binding a pack fixes for every call made with it: the call's layouts and problem
// (with its workspace layout), the first broken layout-only rule, and the kernel arguments
// and launch shape with every address left for the call to fill in.
struct BoundCall {
  const PlanState* owner = nullptr;
  std::uint64_t owner_id = 0;  // PlanState::id of the owner
  recipe::CallLayout layout;
  int layout_row = -1;   // rule-table row of the first broken layout-only call rule, or -1
  int layout_role = -1;  // the role that broke it
  // The arguments with the addresses the pack held at bind, completed by Device::prepare
  // (TMA descriptors encoded) when `prepared`: a call whose addresses are all unchanged
  // launches them as they are.
  kernels::KernelArgs args{};
  bool prepared = false;
  LaunchConfig launch;
  // The launch of a call that splits K (recipe::splits_k): its grid covers the work units.
  LaunchConfig launch_split;
};

struct PlanState {
  // A fused plan has a kernel; a fallback plan has a runner instead.
  PlanState(Engine engine, std::optional<Decline> declined, std::shared_ptr<Device> device,
            std::shared_ptr<const LoadedKernel> kernel, recipe::Recipe recipe,
            std::shared_ptr<const Runner> runner = nullptr);

  // 1. the pack's roles, layouts and problem (resolved at bind); 2. check every call rule in
  // table order, counting a deferral on the first broken one; 3. launch with the bound
  // arguments, this call's addresses and the next epoch. Nothing is written before the
  // launch: taps need no seed, the workspace no zeroing (kernels/tap_commit.cuh).
  Status execute(const BoundPack& pack, const Workspace& workspace, Stream stream) const;
  Verdict explain(const BoundPack& pack, const Workspace& workspace) const;
  Result<BoundPack> bind(const VariantPack& pack) const;
  // The first layout-only call rule that the declared call (every tensor a bare address,
  // read as declared) breaks, as a decline naming that rule; nullopt when it breaks none.
  // build() declines such a graph: a plan none of whose declared calls is legal is no plan.
  std::optional<Decline> declared_call_decline() const;
  // The workspace a call with this pack needs (recipe/workspace.h).
  Result<std::uint64_t> workspace_bytes(const BoundPack& pack) const;

  const Engine engine;
  const std::optional<Decline> declined;
  const std::shared_ptr<Device> device;
  const std::shared_ptr<const LoadedKernel> kernel;
  const recipe::Recipe recipe;
  const std::shared_ptr<const Runner> runner;
  // Rows of the rule table with call scope, in table order.
  const std::vector<int> call_rows;
  // Refused calls per rule-table row. Counting is the one thing a call changes; it is a
  // statistic, not state any call reads.
  const std::unique_ptr<std::atomic<std::uint64_t>[]> deferrals;
  const std::map<std::int64_t, int> slot_by_uid;
  const std::map<std::string, int, std::less<>> slot_by_name;
  // The next launch's epoch (KernelArgs::epoch): starts at a random value at build and
  // advances by one per launch, so the taps' counter words never need zeroing, even in a
  // workspace another plan used last (kernels/tap_commit.cuh has the collision argument).
  // Like the deferral counters, a mutable the plan's immutable facts do not depend on.
  const std::unique_ptr<std::atomic<std::uint64_t>> epoch;
  // Random: a bound pack names its plan by address and this id (BoundCall::owner_id).
  const std::uint64_t id;

 private:
  // The rule-table row of the first broken call rule, or -1: per-call rows are evaluated,
  // layout rows were evaluated at bind.
  int first_broken(const BoundCall& call, const recipe::CallView& view, int* role) const noexcept;
  Result<const BoundCall*> bound_call(const BoundPack& pack) const;
  void resolve_addresses(const BoundPack& pack, const Workspace& workspace,
                         recipe::CallView& view) const noexcept;
  std::shared_ptr<const BoundCall> make_bound_call(const BoundPack& pack) const;
};

// Internals of a plan for the benchmarks, which launch the plan's kernel raw beside
// execute to measure what execute adds.
struct PlanAccess {
  static const PlanState& state(const Plan& plan) { return *plan.state_; }
  static const BoundCall& call(const BoundPack& pack) { return *pack.call_; }
  static Plan make(std::shared_ptr<const PlanState> state) { return Plan(std::move(state)); }
};

// The kernel arguments of a checked call: kernel-order extents and strides, stride 0 on
// every axis of extent 1 so broadcast and reduced axes read one element.
void fill_kernel_args(const recipe::CallView& view, kernels::KernelArgs& args) noexcept;

// The persistent launch of a call: min(the call's work units — cluster tiles, each tile that
// `split` splits counted as its splits —, the clusters the device keeps resident) clusters
// of config.cluster_ctas() CTAs in x (`resident_ctas` 0: one cluster per work unit), the
// config's block and shared memory.
LaunchConfig launch_config(const recipe::KernelConfig& config, const fusion::ProblemShape& problem,
                           unsigned resident_ctas,
                           const recipe::SplitWorkspaceLayout& split) noexcept;

}  // namespace fusedgemm::runtime
