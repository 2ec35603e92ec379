// The compile-only device builds a fused plan as a GPU of its multiprocessor count would:
// the cost model plans for that count, the kernel is generated and compiled into the
// Context's cache (where a GPU build then hits it), and execute runs every rule and launches
// nothing.
#include "runtime/compile_only_device.h"

#include <gtest/gtest.h>

#include "fusedgemm/context.h"
#include "fusedgemm/device.h"
#include "fusedgemm/plan.h"
#include "jit/jit_test_util.h"
#include "runtime/plan_state.h"
#include "support/flavor_graphs.h"

namespace fusedgemm {
namespace {

TEST(CompileOnlyDevice, BuildsTheGpusKernelAndLaunchesNothing) {
  const jit::testing::TempDir dir;
  auto context = jit::testing::hermetic_context(dir.path());
  if (!context && context.status().code() == ErrorCode::kUnavailable) {
    GTEST_SKIP() << "no NVRTC: " << context.status().message();
  }
  ASSERT_TRUE(context) << context.status().message();
  auto fg = test::make_flavor_graph(test::Flavor::kPlain, {.m = 4096, .n = 4096, .k = 4096});
  ASSERT_TRUE(fg) << fg.status().message();
  const auto device = make_compile_only_device(132);
  EXPECT_FALSE(device->is_host());
  EXPECT_EQ(device->multiprocessor_count(), 132);
  auto plan = build(fg->graph, BuildOptions{device, context.value()});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(plan->engine(), Engine::kFused);
  const auto& config = runtime::PlanAccess::state(plan.value()).recipe.config;
  EXPECT_EQ(config.sm_count, 132);
  // The pick for 132 SMs (KernelConfig.PicksTheTileByWavesAndSharedMemoryTraffic).
  EXPECT_EQ(config.split, recipe::ConsumerSplit::kM);
  EXPECT_EQ(config.tile_m * config.tile_n, 128 * 256);
  EXPECT_GT(config.shared_bytes, 0u);  // the kernel was generated
  EXPECT_EQ(context.value()->counters().compiles, 1);
  // A second build of the same graph is served by the cache.
  auto again = build(fg->graph, BuildOptions{device, context.value()});
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(context.value()->counters().compiles, 1);
  // Execute checks the rules (a missing buffer is refused) and launches nothing.
  const Status refused = plan->execute(VariantPack{}, {}, nullptr);
  EXPECT_EQ(refused.code(), ErrorCode::kIllegalCall);
}

}  // namespace
}  // namespace fusedgemm
