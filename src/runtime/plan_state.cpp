#include "runtime/plan_state.h"

#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iterator>
#include <thread>

#include <fmt/format.h>

#include "graph/checked_math.h"
#include "recipe/rules.h"
#include "recipe/tma_global.h"
#include "recipe/workspace.h"

namespace fusedgemm::runtime {
namespace {

std::vector<int> call_rows_of_table() {
  std::vector<int> rows;
  const auto table = recipe::rule_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].scope == recipe::RuleScope::kCall) rows.push_back(static_cast<int>(i));
  }
  return rows;
}

std::map<std::int64_t, int> slots_by_uid(const recipe::Recipe& r) {
  std::map<std::int64_t, int> map;
  for (std::size_t i = 0; i < r.slots.size(); ++i) map[r.slots[i].uid] = static_cast<int>(i);
  return map;
}

std::map<std::string, int, std::less<>> slots_by_name(const recipe::Recipe& r) {
  std::map<std::string, int, std::less<>> map;
  for (std::size_t i = 0; i < r.slots.size(); ++i) map[r.slots[i].name] = static_cast<int>(i);
  return map;
}

// 64 random bits: a plan's first epoch, so two plans sharing a workspace one after the other
// use unrelated epochs, and its identity, so a pack bound by a destroyed plan is not taken
// for one bound by a new plan that happens to live at the same address.
// getrandom(2), which throws nothing (std::random_device may: build() must not), else the
// clock, the thread and a stack address mixed (splitmix64): distinct all the same.
std::uint64_t random_bits() {
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof bits)) {
    return bits;
  }
  std::uint64_t x =
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      std::hash<std::thread::id>{}(std::this_thread::get_id()) ^
      reinterpret_cast<std::uintptr_t>(&bits);
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

PlanState::PlanState(Engine engine_, std::optional<Decline> declined_,
                     std::shared_ptr<Device> device_, std::shared_ptr<const LoadedKernel> kernel_,
                     recipe::Recipe recipe_, std::shared_ptr<const Runner> runner_)
    : engine(engine_),
      declined(std::move(declined_)),
      device(std::move(device_)),
      kernel(std::move(kernel_)),
      recipe(std::move(recipe_)),
      runner(std::move(runner_)),
      call_rows(call_rows_of_table()),
      deferrals(new std::atomic<std::uint64_t>[recipe::rule_table().size()]()),
      slot_by_uid(slots_by_uid(recipe)),
      slot_by_name(slots_by_name(recipe)),
      epoch(std::make_unique<std::atomic<std::uint64_t>>(random_bits())),
      id(random_bits()) {}

// The pack errors (pack_unknown_tensor, pack_duplicate_tensor, pack_view_strides, and
// bound_pack below) are not rows of the rule table on purpose: a rule judges a call, role by
// role, and these keys or views name no role of the plan (an unknown name), give one role two
// buffers, or have no rank to re-label, so there is no call to judge and none to defer; they
// are refused by bind() (and by execute, which binds) before any rule runs, with the rule-
// shaped message "<id>: ...; legal: ...", and counted nowhere, as a malformed argument is.
Result<BoundPack> PlanState::bind(const VariantPack& pack) const {
  BoundPack bound;
  bound.buffers_.resize(recipe.slots.size());
  std::vector<bool> given(recipe.slots.size(), false);
  for (const auto& entry : pack.entries()) {
    int slot = -1;
    if (entry.by_name) {
      if (auto it = slot_by_name.find(entry.name); it != slot_by_name.end()) slot = it->second;
    } else {
      if (auto it = slot_by_uid.find(entry.uid); it != slot_by_uid.end()) slot = it->second;
    }
    // Worded only when refused: bind is on the path of every execute of a VariantPack.
    const auto key = [&entry] {
      return entry.by_name ? fmt::format("name '{}'", entry.name)
                           : fmt::format("uid {}", entry.uid);
    };
    FG_CHECK(slot >= 0, ErrorCode::kIllegalCall,
             fmt::format("pack_unknown_tensor: {} names no buffer of this plan; legal: the "
                         "plan's tensors (see Plan::describe)",
                         key()));
    FG_CHECK(!given[slot], ErrorCode::kIllegalCall,
             fmt::format("pack_duplicate_tensor: {} gives tensor '{}' a second buffer; legal: "
                         "one buffer per tensor",
                         key(), recipe.slots[slot].name));
    given[slot] = true;
    const BufferView& view = entry.buffer;
    // A view's rank is the view_rank rule's to judge (so it is counted as a deferral and
    // named with its role); a view whose strides do not pair with its extents has no rank.
    const auto& role = recipe.roles[recipe.slots[slot].first_role];
    FG_CHECK(!view.is_view || view.shape.size() == view.stride.size(), ErrorCode::kIllegalCall,
             fmt::format("pack_view_strides: role {} '{}': view with {} extents and {} strides; "
                         "legal: one stride per extent",
                         to_string(role.role), role.name, view.shape.size(), view.stride.size()));
    auto& b = bound.buffers_[slot];
    b.data = view.data;
    b.is_view = view.is_view;
    b.data_type = view.data_type;
    b.read_only = view.read_only;
    b.rank = view.is_view ? static_cast<int>(view.shape.size()) : kRank;
    for (std::size_t i = 0; view.is_view && i < view.shape.size() && i < kRank; ++i) {
      b.shape[i] = view.shape[i];
      b.stride[i] = view.stride[i];
    }
  }
  bound.call_ = make_bound_call(bound);
  return bound;
}

std::optional<Decline> PlanState::declared_call_decline() const {
  VariantPack pack;
  // Any non-null addresses: the layout-only rows judged at bind never read them.
  static constexpr std::uintptr_t kSomeAddress = 1u << 20;
  for (std::size_t i = 0; i < recipe.slots.size(); ++i) {
    pack.set(recipe.slots[i].uid,
             BufferView::address(reinterpret_cast<void*>(kSomeAddress * (i + 1))));
  }
  auto bound = bind(pack);
  if (!bound) return Decline{"declared_call", bound.status().message()};
  const BoundCall& call = *bound->call_;
  if (call.layout_row < 0) return std::nullopt;
  recipe::CallView view;
  view.layout = &call.layout;
  resolve_addresses(bound.value(), {}, view);
  const auto& row = recipe::rule_table()[call.layout_row];
  return Decline{std::string(row.id), row.call_explain(recipe, view, call.layout_role)};
}

Result<std::uint64_t> PlanState::workspace_bytes(const BoundPack& pack) const {
  FG_ASSIGN_OR_RETURN(const BoundCall* call, bound_call(pack));
  return call->layout.workspace.bytes;
}

Result<const BoundCall*> PlanState::bound_call(const BoundPack& pack) const {
  const BoundCall* call = pack.call_.get();
  if (call != nullptr && call->owner == this && call->owner_id == id) return call;
  return Status(ErrorCode::kIllegalCall,
                "bound_pack: the pack was bound by another plan, or not bound; legal: a pack "
                "from this plan's bind()");
}

void PlanState::resolve_addresses(const BoundPack& pack, const Workspace& workspace,
                                  recipe::CallView& view) const noexcept {
  recipe::resolve_addresses(recipe, pack, workspace, device->ordinal(), device->current_ordinal(),
                            view);
}

std::shared_ptr<const BoundCall> PlanState::make_bound_call(const BoundPack& pack) const {
  auto call = std::make_shared<BoundCall>();
  call->owner = this;
  call->owner_id = id;
  recipe::resolve_layout(recipe, pack, call->layout);
  recipe::CallView view;
  view.layout = &call->layout;
  resolve_addresses(pack, {}, view);
  const auto table = recipe::rule_table();
  for (int row : call_rows) {
    if (table[row].per_call) continue;
    if (const int role = table[row].call_violation(recipe, view); role >= 0) {
      call->layout_row = row;
      call->layout_role = role;
      break;
    }
  }
  const unsigned resident = kernel ? kernel->resident_ctas() : 0;
  call->launch = launch_config(recipe.config, call->layout.problem, resident, {});
  call->launch_split =
      launch_config(recipe.config, call->layout.problem, resident, call->layout.workspace.split);
  // A runner (the fallback engine) builds its own arguments per step.
  if (!runner) {
    fill_kernel_args(view, call->args);
    call->args.raster_group =
        recipe::raster_group(recipe.config, call->layout.problem,
                             call->launch.grid[0] / std::max(1, recipe.config.cluster_ctas()));
    call->args.schedule =
        recipe::schedule_divisors(recipe.config, call->layout.problem, call->args.raster_group);
  }
  int roles_missing = 0;
  for (int i = 0; i < call->layout.role_count; ++i) roles_missing += view.data[i] == nullptr;
  // Encoding reads only addresses and layouts; a pack whose layouts break a rule or that
  // lacks a buffer is never launched as bound, so it is not prepared.
  call->prepared = kernel && call->layout_row < 0 && roles_missing == 0 &&
                   device->prepare(*kernel, call->args).is_ok();
  return call;
}

int PlanState::first_broken(const BoundCall& call, const recipe::CallView& view,
                            int* role) const noexcept {
  const auto table = recipe::rule_table();
  for (int row : call_rows) {
    if (!table[row].per_call) {
      if (row != call.layout_row) continue;
      *role = call.layout_role;
      return row;
    }
    if (const int r = table[row].call_violation(recipe, view); r >= 0) {
      *role = r;
      return row;
    }
  }
  return -1;
}

Status PlanState::execute(const BoundPack& pack, const Workspace& workspace, Stream stream) const {
  FG_ASSIGN_OR_RETURN(const BoundCall* call, bound_call(pack));
  recipe::CallView view;
  view.layout = &call->layout;
  resolve_addresses(pack, workspace, view);
  int role = -1;
  if (const int row = first_broken(*call, view, &role); row >= 0) {
    deferrals[row].fetch_add(1, std::memory_order_relaxed);
    return Status(ErrorCode::kIllegalCall,
                  recipe::rule_table()[row].call_explain(recipe, view, role));
  }

  if (runner) return runner->run(view, stream);

  // Every rule passed: launch (one launch per call; nothing to seed).
  bool moved = false;
  for (int i = 0; i < call->args.buffer_count; ++i) {
    moved = moved || call->args.buffers[i].data != view.data[i];
  }
  // Taps and a split K arrive on counters in the workspace, tagged with the launch's epoch.
  const bool split = recipe::splits_k(call->layout.workspace, workspace.data, workspace.bytes);
  const bool counted = call->layout.workspace.tap_count > 0 || split;
  // Addresses as bound and no counters (so neither an epoch nor the workspace address is
  // read): the bound arguments are this call's as they stand, and are launched without a copy.
  if (call->prepared && !moved && !counted) {
    return device->launch_prepared(*kernel, call->launch, call->args, stream);
  }
  kernels::KernelArgs args;
  args.batch = call->args.batch;
  args.m = call->args.m;
  args.n = call->args.n;
  args.k = call->args.k;
  args.raster_group = call->args.raster_group;
  args.schedule = call->args.schedule;
  args.workspace = workspace.data;
  args.epoch = counted ? epoch->fetch_add(1, std::memory_order_relaxed) : 0;
  args.buffer_count = call->args.buffer_count;
  std::copy(std::begin(call->args.taps), std::end(call->args.taps), std::begin(args.taps));
  args.split = call->args.split;
  if (split) args.split.splits = call->layout.workspace.split.splits;
  const LaunchConfig& launch = split ? call->launch_split : call->launch;
  for (int i = 0; i < args.buffer_count; ++i) {
    args.buffers[i] = call->args.buffers[i];
    args.buffers[i].data = const_cast<void*>(view.data[i]);
  }
  if (call->prepared && !moved) {
    std::copy(std::begin(call->args.tma), std::end(call->args.tma), std::begin(args.tma));
    args.tma_tiles = call->args.tma_tiles;
    return device->launch_prepared(*kernel, launch, args, stream);
  }
  return device->launch(*kernel, launch, args, stream);
}

Verdict PlanState::explain(const BoundPack& pack, const Workspace& workspace) const {
  auto call = bound_call(pack);
  if (!call) return {"bound_pack", call.status().message()};
  recipe::CallView view;
  view.layout = &call.value()->layout;
  resolve_addresses(pack, workspace, view);
  int role = -1;
  const int row = first_broken(*call.value(), view, &role);
  if (row < 0) return {"", "legal"};
  const auto& rule = recipe::rule_table()[row];
  return {std::string(rule.id), rule.call_explain(recipe, view, role)};
}

void fill_kernel_args(const recipe::CallView& view, kernels::KernelArgs& args) noexcept {
  const recipe::CallLayout& layout = *view.layout;
  args.batch = layout.problem.batch;
  args.m = layout.problem.m;
  args.n = layout.problem.n;
  args.k = layout.problem.k;
  args.workspace = const_cast<void*>(view.workspace);
  args.epoch = 0;
  args.buffer_count = layout.role_count;
  for (auto& t : args.taps) t = {0, 0, 0};
  for (int i = 0; i < layout.workspace.tap_count; ++i) {
    const recipe::TapWorkspaceLayout& t = layout.workspace.taps[i];
    args.taps[t.role] = {static_cast<long long>(t.counters_bytes),
                         static_cast<long long>(t.partials_bytes),
                         static_cast<long long>(t.slot_floats)};
  }
  // Unsplit as bound: execute splits K where the call's workspace holds the partials.
  args.split = {static_cast<long long>(layout.workspace.split.counters_bytes),
                static_cast<long long>(layout.workspace.split.partials_bytes), 1,
                layout.workspace.split.first};
  for (int i = 0; i < layout.role_count; ++i) {
    const Layout k = recipe::kernel_arg_layout(layout.roles[i].kernel);
    auto& b = args.buffers[i];
    b.data = const_cast<void*>(view.data[i]);
    for (int axis = 0; axis < kRank; ++axis) {
      b.shape[axis] = k.shape[axis];
      b.stride[axis] = k.stride[axis];
    }
  }
}

LaunchConfig launch_config(const recipe::KernelConfig& config, const fusion::ProblemShape& problem,
                           unsigned resident_ctas,
                           const recipe::SplitWorkspaceLayout& split) noexcept {
  LaunchConfig launch;
  const auto tiles = [](std::int64_t extent, int tile) {
    return extent <= 0 ? 0 : ceil_div(extent, tile);
  };
  const std::int64_t cluster = std::max(1, config.cluster_ctas());
  const std::int64_t rows = ceil_div(tiles(problem.m, config.tile_m), config.cluster_m);
  const std::int64_t cols = ceil_div(tiles(problem.n, config.tile_n), config.cluster_n);
  // Work units of the call. Bound packs are configured before the grid_extent rule refuses
  // a call, so the product saturates rather than wraps.
  const std::int64_t cluster_tiles =
      saturating_mul(saturating_mul(std::max<std::int64_t>(0, problem.batch), rows), cols);
  // Each split tile is `splits` units (k_split keeps them to one wave: no overflow).
  const std::int64_t units =
      split.splits > 1 ? cluster_tiles + split.tiles * (split.splits - 1) : cluster_tiles;
  // Persistent: one CTA per resident slot, never more clusters than work units, at least one
  // cluster (an empty problem launches one that finds no tile).
  // (The host device runs any grid; its launch is sized by the tiles, within CUDA's x limit.)
  constexpr std::int64_t kMaxGridX = 2147483647;
  const std::int64_t resident = resident_ctas > 0 ? resident_ctas / cluster : kMaxGridX / cluster;
  const std::int64_t clusters = std::max<std::int64_t>(1, std::min(units, resident));
  launch.grid[0] = static_cast<unsigned>(clusters * cluster);
  launch.cluster[0] = static_cast<unsigned>(cluster);
  launch.block[0] = static_cast<unsigned>(config.threads);
  launch.shared_bytes = config.shared_bytes;
  launch.dependent_launch = config.dependent_launch;
  return launch;
}

}  // namespace fusedgemm::runtime
