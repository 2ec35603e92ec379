// The illegal-call table (support/illegal_calls.h) on the GPU: every case's plan is built
// for the CUDA device and its buffers live in device memory, mirrored with their guards.
// The unchanged call runs and matches the reference; the changed call is refused by its
// rule, counts one deferral, and leaves every byte of every output, tap and guard holding
// its canary. (device_current needs a second GPU and runs on the host test only, as do the
// fp4 cases, which the GPU generator leaves to the fallback engine.) Suites
// named *Gpu* carry the ctest label `gpu` and skip without a device.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "runtime/cuda_device.h"
#include "support/call_harness.h"
#include "support/device_call.h"
#include "support/illegal_calls.h"

namespace fusedgemm::test {
namespace {

class IllegalCallGpu : public OnGpu<> {
 protected:
  // Executes `host_pack` (host addresses of `call`) with every buffer on the device.
  Status execute(const Plan& plan, CallBuffers& call, const VariantPack& host_pack) {
    DeviceCall device_call(device_, call);
    FG_TRY(device_call.upload());
    const VariantPack pack = device_call.on_device(host_pack);
    std::uint64_t bytes = plan.workspace_bytes();
    if (auto bound = plan.bind(pack)) {
      if (auto needed = plan.workspace_bytes(bound.value())) bytes = needed.value();
    }
    FG_ASSIGN_OR_RETURN(Workspace workspace, device_call.workspace(bytes));
    const Status status = plan.execute(pack, workspace, nullptr);
    FG_TRY(device_call.download());
    return status;
  }
};

TEST_F(IllegalCallGpu, EachCaseIsRefusedByItsRuleBeforeAnyWrite) {
  int ran = 0;
  for (const IllegalCase& c : illegal_cases()) {
    if (c.other_current_device) continue;
    SCOPED_TRACE(case_name(c));
    auto fg = make_flavor_graph(c.flavor, c.shape);
    ASSERT_TRUE(fg) << fg.status().message();
    auto plan = build(fg->graph, BuildOptions{device_});
    ASSERT_TRUE(plan) << plan.status().message();
    if (plan->engine() != Engine::kFused) {
      // What the GPU generator does not emit yet (fp4 operands) runs on the fallback engine,
      // whose calls have no TMA rules; the host test covers the fused rule.
      std::printf("  on the fallback engine (%s): %s\n", plan->declined()->rule.c_str(),
                  case_name(c).c_str());
      continue;
    }
    auto call_fg = make_flavor_graph(c.flavor, c.call_shape.value_or(c.shape));
    ASSERT_TRUE(call_fg) << call_fg.status().message();
    auto call = CallBuffers::make(call_fg->graph, 11);
    ASSERT_TRUE(call) << call.status().message();
    const bool views = c.call_shape.has_value();

    // The unchanged call is legal on the GPU: the change alone breaks the rule.
    call->prepare();
    const Status legal = execute(plan.value(), call.value(), call->pack(views));
    ASSERT_TRUE(legal) << legal.message();
    EXPECT_TRUE(call->matches_reference(call_fg->graph));
    EXPECT_TRUE(call->outside_untouched());

    const Changes changes = c.change(call.value());
    call->fill_canary();
    const Status refused =
        execute(plan.value(), call.value(), pack_with(call.value(), changes, views));
    EXPECT_EQ(refused.code(), ErrorCode::kIllegalCall) << refused.message();
    const std::string& m = refused.message();
    const std::string prefix = c.role ? fmt::format("{}: role {} '{}': ", c.rule, c.role, c.tensor)
                                      : fmt::format("{}: ", c.rule);
    EXPECT_EQ(m.rfind(prefix, 0), 0u) << m << "\nwant prefix: " << prefix;
    EXPECT_NE(m.find(expected_seen(c, fg->graph)), std::string::npos) << m;
    EXPECT_TRUE(call->all_canary()) << "a refused call wrote device memory";
    for (const auto& [rule, count] : deferral_map(plan.value())) {
      EXPECT_EQ(count, rule == c.rule ? 1u : 0u) << "deferrals of '" << rule << "'";
    }
    ++ran;
  }
  EXPECT_GE(ran, static_cast<int>(illegal_cases().size()) - 3);
}

}  // namespace
}  // namespace fusedgemm::test
