// The illegal-call table: at least one case per call row of recipe::rule_table(), each run
// through the public Plan::execute on the host device. A refused call returns kIllegalCall
// with the rule's message (rule id, role, tensor, the offending number), counts exactly one
// deferral under that rule and none under any other, writes nothing (canary words fill every
// output and tap and their surroundings), and explain names the same rule. A new call row
// without a case here fails IllegalCall.EveryCallRowHasACase.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "fusion/analyze.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/rules.h"
#include "runtime/device.h"
#include "runtime/host_device.h"
#include "runtime/plan_state.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"
#include "support/illegal_calls.h"

namespace fusedgemm::test {
namespace {

constexpr Major kM = Major::kM;
constexpr FlavorShape kPlain{.batch = 1, .m = 72, .n = 100, .k = 64};

// The host device, except that the calling thread's current device is another one: what a
// CUDA caller sees after cuCtxSetCurrent to a second GPU.
class OtherCurrentDevice final : public runtime::Device {
 public:
  std::string_view name() const noexcept override { return "host (device 1 current)"; }
  bool is_host() const noexcept override { return true; }
  int ordinal() const noexcept override { return 0; }
  int current_ordinal() const noexcept override { return 1; }
  Result<std::shared_ptr<const runtime::LoadedKernel>> load(
      const runtime::KernelImage& image) override {
    return host_.load(image);
  }
  Status fill(const runtime::Fill32& fill, runtime::Stream stream) noexcept override {
    return host_.fill(fill, stream);
  }
  Status launch(const runtime::LoadedKernel& kernel, const runtime::LaunchConfig& config,
                kernels::KernelArgs& args, runtime::Stream stream) noexcept override {
    return host_.launch(kernel, config, args, stream);
  }

 private:
  runtime::HostDevice host_;
};

// Buffers replaced in the call's pack: a view (or null address), or nullopt to leave the
// tensor out of the pack.
void expect_refused(const IllegalCase& c) {
  SCOPED_TRACE(case_name(c));
  auto fg = make_flavor_graph(c.flavor, c.shape);
  ASSERT_TRUE(fg) << fg.status().message();
  std::shared_ptr<Device> device = make_host_device();
  if (c.other_current_device) device = std::make_shared<OtherCurrentDevice>();
  auto plan = build(fg->graph, BuildOptions{device});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call_fg = make_flavor_graph(c.flavor, c.call_shape.value_or(c.shape));
  ASSERT_TRUE(call_fg) << call_fg.status().message();
  auto call = CallBuffers::make(call_fg->graph, 11);
  ASSERT_TRUE(call) << call.status().message();
  const bool views = c.call_shape.has_value();

  // The unchanged call is legal: the change alone breaks the rule.
  if (!c.other_current_device) {
    call->prepare();
    const Status legal =
        plan->execute(call->pack(views), workspace_of(plan.value(), call->pack(views)), nullptr);
    ASSERT_TRUE(legal) << legal.message();
    ASSERT_TRUE(call->matches_reference(call_fg->graph));
  }

  const VariantPack pack = pack_with(call.value(), c.change(call.value()), views);
  call->fill_canary();
  const Status status = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  EXPECT_EQ(status.code(), ErrorCode::kIllegalCall) << status.message();
  const std::string& m = status.message();
  const std::string prefix = c.role ? fmt::format("{}: role {} '{}': ", c.rule, c.role, c.tensor)
                                    : fmt::format("{}: ", c.rule);
  EXPECT_EQ(m.rfind(prefix, 0), 0u) << m << "\nwant prefix: " << prefix;
  EXPECT_NE(m.find(expected_seen(c, fg->graph)), std::string::npos)
      << m << "\nwant: " << expected_seen(c, fg->graph);
  EXPECT_NE(m.find("; legal: "), std::string::npos) << m;
  EXPECT_TRUE(call->all_canary());

  for (const auto& [rule, count] : deferral_map(plan.value())) {
    EXPECT_EQ(count, rule == c.rule ? 1u : 0u) << "deferrals of '" << rule << "'";
  }
  const Verdict verdict = plan->explain(pack, workspace_of(plan.value(), pack));
  EXPECT_EQ(verdict.rule, c.rule) << verdict.message;
  EXPECT_EQ(verdict.message, m);
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 1u) << "explain counted a deferral";
}

TEST(IllegalCall, EachCaseIsRefusedByItsRuleBeforeAnyWrite) {
  for (const IllegalCase& c : illegal_cases()) expect_refused(c);
}

TEST(IllegalCall, EveryCallRowHasACase) {
  std::set<std::string_view> covered;
  for (const IllegalCase& c : illegal_cases()) covered.insert(c.rule);
  covered.insert("workspace");          // IllegalCall.WorkspaceMissingShortOrMisaligned
  covered.insert("workspace_overlap");  // CallContract.AWorkspaceSharingAnyBufferIsRefused
  for (const recipe::Rule& rule : recipe::rule_table()) {
    if (rule.scope != recipe::RuleScope::kCall) continue;
    EXPECT_TRUE(covered.contains(rule.id))
        << "call rule '" << rule.id << "' has no case in illegal_call_test.cpp";
  }
}

// A taps flavor needs a workspace that grows with the call's tiles: missing, short or
// misaligned ones are refused by the workspace rule, naming the needed and given bytes.
TEST(IllegalCall, WorkspaceMissingShortOrMisaligned) {
  auto fg = make_flavor_graph(Flavor::kTapsRow, {.batch = 2, .m = 72, .n = 200, .k = 16});
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 3);
  ASSERT_TRUE(call) << call.status().message();
  auto bound = plan->bind(call->pack());
  ASSERT_TRUE(bound) << bound.status().message();
  const auto needed = plan->workspace_bytes(bound.value());
  ASSERT_TRUE(needed) << needed.status().message();
  ASSERT_GT(needed.value(), 0u);
  EXPECT_EQ(needed.value(), plan->workspace_bytes());  // the call is the declared problem

  std::vector<std::uint64_t> storage(needed.value() / 8 + 2);
  auto* base = reinterpret_cast<std::uint8_t*>(storage.data());
  const std::vector<std::pair<Workspace, std::string>> refused = {
      {Workspace{}, "workspace of 0 bytes"},
      {Workspace{base, needed.value() - 1},
       fmt::format("workspace of {} bytes", needed.value() - 1)},
      {Workspace{nullptr, needed.value()}, fmt::format("workspace of {} bytes", needed.value())},
      {Workspace{base + 4, needed.value()}, fmt::format("workspace of {} bytes", needed.value())},
  };
  int row = -1;
  const auto table = recipe::rule_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].id == "workspace") row = static_cast<int>(i);
  }
  ASSERT_GE(row, 0);
  // Batch 2 of 72 x 200: one group per (batch, M unit), of every N unit.
  const auto& config = runtime::PlanAccess::state(plan.value()).recipe.config;
  const std::string groups = fmt::format("'T_add' {} group(s) of {} unit(s)",
                                         2 * ((72 + config.unit_m() - 1) / config.unit_m()),
                                         (200 + config.unit_n() - 1) / config.unit_n());
  std::uint64_t expected = 0;
  for (const auto& [ws, seen] : refused) {
    SCOPED_TRACE(seen);
    call->fill_canary();
    const Status s = plan->execute(bound.value(), ws, nullptr);
    EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
    EXPECT_EQ(s.message().rfind("workspace: ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(seen), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(fmt::format("needed: {} bytes", needed.value())), std::string::npos)
        << s.message();
    EXPECT_NE(s.message().find("; legal: "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(groups), std::string::npos) << s.message();
    EXPECT_TRUE(call->all_canary());
    EXPECT_EQ(deferral_map(plan.value())["workspace"], ++expected);
    const Verdict v = plan->explain(bound.value(), ws);
    EXPECT_EQ(v.rule, "workspace");
    EXPECT_EQ(v.message, s.message());
  }
  call->prepare();
  const Status ok = plan->execute(bound.value(), Workspace{base, needed.value()}, nullptr);
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_TRUE(call->matches_reference(fg->graph));
  EXPECT_EQ(total_deferrals(plan.value()), expected);
}

// A pack of another plan has no workspace size here.
TEST(IllegalCall, WorkspaceBytesOfAForeignPackIsRefused) {
  auto fg = make_flavor_graph(Flavor::kTapsFull, {.batch = 1, .m = 64, .n = 64, .k = 16});
  ASSERT_TRUE(fg) << fg.status().message();
  auto one = build(fg->graph, BuildOptions{make_host_device()});
  auto two = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(one && two);
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  auto bound = one->bind(call->pack());
  ASSERT_TRUE(bound) << bound.status().message();
  const auto foreign = two->workspace_bytes(bound.value());
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.status().code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(foreign.status().message().rfind("bound_pack: ", 0), 0u) << foreign.status().message();
}

// A pack outlives the plan that bound it: a plan built afterwards, even one the allocator
// places where the old one lived, refuses it rather than reading its stale arguments.
TEST(IllegalCall, APackOfADestroyedPlanIsRefused) {
  auto fg = make_flavor_graph(Flavor::kPlain, kPlain);
  ASSERT_TRUE(fg) << fg.status().message();
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  std::optional<BoundPack> stale;
  {
    auto old_plan = build(fg->graph, BuildOptions{make_host_device()});
    ASSERT_TRUE(old_plan) << old_plan.status().message();
    auto bound = old_plan->bind(call->pack());
    ASSERT_TRUE(bound) << bound.status().message();
    stale = std::move(bound.value());
  }
  for (int i = 0; i < 8; ++i) {  // some allocators hand the freed block back at once
    auto plan = build(fg->graph, BuildOptions{make_host_device()});
    ASSERT_TRUE(plan) << plan.status().message();
    call->fill_canary();
    const Status s = plan->execute(*stale, {}, nullptr);
    ASSERT_EQ(s.code(), ErrorCode::kIllegalCall) << s.message();
    EXPECT_EQ(s.message().rfind("bound_pack: ", 0), 0u) << s.message();
    EXPECT_TRUE(call->all_canary());
  }
}

// The empty name is a name no tensor has, not uid 0: a tensor of uid 0 is not bound by it.
TEST(IllegalCall, TheEmptyNameIsNoUid) {
  auto graph = validated_graph(R"({
    "fusedgemm_graph": 1, "name": "plain, D of uid 0",
    "tensors": [
      {"name": "A", "dims": [1, 64, 64], "data_type": "bf16"},
      {"name": "B", "dims": [1, 64, 64], "strides": [4096, 1, 64], "data_type": "bf16"},
      {"name": "D", "uid": 0, "dims": [1, 64, 64], "data_type": "bf16", "output": true}],
    "nodes": [{"kind": "matmul", "name": "gemm", "inputs": ["A", "B"], "outputs": ["D"]}]})");
  ASSERT_TRUE(graph) << graph.status().message();
  auto plan = build(graph.value(), BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(graph.value(), 4);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();
  VariantPack pack;
  for (const char* name : {"A", "B"}) pack.set(name, call.value()[name].buffer->data());
  pack.set("", call.value()["D"].buffer->data());
  const Status s = plan->execute(pack, Workspace{}, nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(s.message().rfind("pack_unknown_tensor: name '' names no buffer", 0), 0u)
      << s.message();
  EXPECT_TRUE(call->all_canary());
  // By uid 0, D is bound.
  VariantPack by_uid;
  for (const char* name : {"A", "B"}) by_uid.set(name, call.value()[name].buffer->data());
  by_uid.set(std::int64_t{0}, call.value()["D"].buffer->data());
  EXPECT_TRUE(plan->bind(by_uid)) << plan->bind(by_uid).status().message();
}

TEST(IllegalCall, UnknownUidOrNameIsAPackError) {
  auto fg = make_flavor_graph(Flavor::kPlain, kPlain);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();

  VariantPack by_name = call->pack();
  by_name.set("bias", static_cast<void*>(call.value()["A"].buffer->data()));
  const Status s = plan->execute(by_name, workspace_of(plan.value(), by_name), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(s.message().rfind("pack_unknown_tensor: name 'bias' names no buffer", 0), 0u)
      << s.message();
  EXPECT_EQ(plan->explain(by_name, workspace_of(plan.value(), by_name)).rule,
            "pack_unknown_tensor");

  VariantPack by_uid = call->pack();
  by_uid.set(std::int64_t{9999}, static_cast<void*>(call.value()["A"].buffer->data()));
  const Status u = plan->execute(by_uid, workspace_of(plan.value(), by_uid), nullptr);
  EXPECT_EQ(u.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(u.message().rfind("pack_unknown_tensor: uid 9999 names no buffer", 0), 0u)
      << u.message();
  EXPECT_EQ(plan->explain(by_uid, workspace_of(plan.value(), by_uid)).rule, "pack_unknown_tensor");

  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

TEST(IllegalCall, ATensorGivenTwiceIsAPackError) {
  auto fg = make_flavor_graph(Flavor::kPlain, kPlain);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();
  auto b = fg->graph.find_tensor("B");
  ASSERT_TRUE(b);

  // Once by name and once by uid: the same tensor.
  VariantPack pack = call->pack();
  pack.set(*b.value()->uid(), static_cast<void*>(call.value()["B"].buffer->data()));
  const Status s = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  const std::string want = fmt::format(
      "pack_duplicate_tensor: uid {} gives tensor 'B' a second buffer", *b.value()->uid());
  EXPECT_EQ(s.message().rfind(want, 0), 0u) << s.message();
  EXPECT_EQ(plan->explain(pack, workspace_of(plan.value(), pack)).rule, "pack_duplicate_tensor");
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

}  // namespace
}  // namespace fusedgemm::test

namespace fusedgemm::test {
namespace {

// A view whose strides do not pair with its extents has no rank for view_rank to judge: it
// is a pack error, named with the tensor's role, and no rule's deferral.
TEST(IllegalCall, AViewWithoutOneStridePerExtentIsAPackError) {
  auto fg = make_flavor_graph(Flavor::kAuxColumn, kPlain);
  ASSERT_TRUE(fg) << fg.status().message();
  auto plan = build(fg->graph, BuildOptions{make_host_device()});
  ASSERT_TRUE(plan) << plan.status().message();
  auto call = CallBuffers::make(fg->graph, 4);
  ASSERT_TRUE(call) << call.status().message();
  call->fill_canary();
  const VariantPack pack =
      pack_with(call.value(), {{"aux", view(call.value(), "aux", {1, 1, 100}, {100, 1})}}, false);
  const Status s = plan->execute(pack, workspace_of(plan.value(), pack), nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kIllegalCall);
  EXPECT_EQ(s.message().rfind("pack_view_strides: role aux 'aux': view with 3 extents and 2 "
                              "strides; legal: ",
                              0),
            0u)
      << s.message();
  EXPECT_EQ(plan->explain(pack, workspace_of(plan.value(), pack)).rule, "pack_view_strides");
  EXPECT_TRUE(call->all_canary());
  EXPECT_EQ(total_deferrals(plan.value()), 0u);
}

}  // namespace
}  // namespace fusedgemm::test
