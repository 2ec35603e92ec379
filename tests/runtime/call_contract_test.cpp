// Regression tests for the call-contract holes of issue 10: calls that the rules once called
// legal and that computed wrong answers, or that the rules refused on every call of a
// fused plan. Each runs through the public Plan::execute on the host device against the
// fp64 reference, outputs poisoned before the call.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fusedgemm/plan.h"
#include "support/call_harness.h"
#include "support/flavor_graphs.h"
#include "support/illegal_calls.h"

namespace fusedgemm::test {
namespace {

// A plan of `flavor` at `plan_shape` on the host device, and the buffers of a call at
// `call_shape` (declared layouts of that size).
struct Setup {
  Plan plan;
  FlavorGraph call_graph;
  CallBuffers call;
};

Result<Setup> setup(Flavor flavor, const FlavorShape& plan_shape, const FlavorShape& call_shape,
                    std::uint64_t seed = 5) {
  FG_ASSIGN_OR_RETURN(FlavorGraph fg, make_flavor_graph(flavor, plan_shape));
  FG_ASSIGN_OR_RETURN(Plan plan, build(fg.graph, BuildOptions{make_host_device()}));
  FG_ASSIGN_OR_RETURN(FlavorGraph call_fg, make_flavor_graph(flavor, call_shape));
  FG_ASSIGN_OR_RETURN(CallBuffers call, CallBuffers::make(call_fg.graph, seed));
  return Setup{std::move(plan), std::move(call_fg), std::move(call)};
}

// Hole 1: B given in kernel order (b, N, K) with its block scales in kernel order too. At
// N = 192, K = 256 both orders of B_scale have extents [1, 2, 2], so only B can say which
// order the scales are in.
TEST(CallContract, BlockScalesOfBAreReadInTheOrderOfB) {
  auto s = setup(Flavor::kBlockScaled, {.batch = 1, .m = 16, .n = 128, .k = 256},
                 {.batch = 1, .m = 16, .n = 192, .k = 256});
  ASSERT_TRUE(s) << s.status().message();
  const VariantPack pack = pack_with(s->call,
                                     {{"B", view(s->call, "B", {1, 192, 256}, {49152, 256, 1})},
                                      {"B_scale", view(s->call, "B_scale", {1, 2, 2}, {4, 1, 2})}},
                                     /*views=*/true);
  s->call.prepare();
  const Status status = s->plan.execute(pack, workspace_of(s->plan, pack), nullptr);
  ASSERT_TRUE(status) << status.message();
  EXPECT_TRUE(s->call.matches_reference(s->call_graph.graph));
  EXPECT_TRUE(s->call.outside_untouched());
  EXPECT_EQ(total_deferrals(s->plan), 0u);
}

}  // namespace
}  // namespace fusedgemm::test
