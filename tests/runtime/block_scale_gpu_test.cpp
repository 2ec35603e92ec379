// Block-scaled fp8 on the GPU through the public execute, against the fp64 reference: the
// generated block-scaled mainloop (kernels/gemm_sm90_block_scale.cuh) at shapes whose K is
// and is not a multiple of the 128-wide scale block, ragged M and N, M = 1, batch 1 and 3
// and broadcast operands. Scales are random per block (2^u, u in [-1, 1]), so a scale read
// from a wrong block fails; outputs are poisoned and guarded (tests/support/call_harness),
// the guards travelling to the device with the payload. Suites named *Gpu* carry the ctest
// label `gpu` and skip without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "runtime/cuda_device.h"
#include "support/call_harness.h"
#include "support/device_call.h"
#include "support/flavor_graphs.h"

namespace fusedgemm {
namespace {

using test::CallBuffers;
using test::DeviceCall;
using test::Flavor;
using test::FlavorShape;

using BlockScaleGpu = test::OnGpu<testing::TestWithParam<FlavorShape>>;

TEST_P(BlockScaleGpu, MatchesTheReference) {
  const FlavorShape& shape = GetParam();
  SCOPED_TRACE(test::to_string(shape));
  auto flavor = test::make_flavor_graph(Flavor::kBlockScaled, shape);
  ASSERT_TRUE(flavor) << flavor.status().message();
  auto plan = build(flavor->graph, BuildOptions{device_});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(plan->engine(), Engine::kFused);

  for (const std::uint64_t seed : {7u, 8u}) {
    SCOPED_TRACE(seed);
    auto call = CallBuffers::make(flavor->graph, seed);
    ASSERT_TRUE(call) << call.status().message();
    DeviceCall device_call(device_, call.value());
    ASSERT_TRUE(device_call.upload());
    const Status executed = plan->execute(device_call.pack(), {}, nullptr);
    ASSERT_TRUE(executed) << executed.message();
    ASSERT_TRUE(device_call.download());
    EXPECT_TRUE(call->matches_reference(flavor->graph));
    EXPECT_TRUE(call->outside_untouched());
  }
  EXPECT_EQ(test::total_deferrals(plan.value()), 0u);
}

// K a multiple of 128 or not (a partial last scale block, which TMA zero-fills), ragged M
// and N against the 64x128 tile, M = 1, K below one block, batch 1 and 3, broadcast A or B,
// and padded operand rows.
const std::vector<FlavorShape>& shapes() {
  static const std::vector<FlavorShape> kShapes = {
      {.batch = 1, .m = 200, .n = 144, .k = 272},
      {.batch = 3, .m = 200, .n = 144, .k = 272},
      {.batch = 1, .m = 256, .n = 256, .k = 384},
      {.batch = 3, .m = 256, .n = 256, .k = 384},
      {.batch = 1, .m = 1, .n = 256, .k = 384},
      {.batch = 3, .m = 1, .n = 144, .k = 272},
      {.batch = 2, .m = 64, .n = 128, .k = 16},
      {.batch = 2, .m = 130, .n = 260, .k = 1008},
      {.batch = 3, .m = 200, .n = 144, .k = 272, .a_batch_one = true},
      {.batch = 3, .m = 200, .n = 144, .k = 272, .b_batch_one = true},
      {.batch = 1, .m = 200, .n = 144, .k = 272, .operand_pad = 32},
  };
  return kShapes;
}

INSTANTIATE_TEST_SUITE_P(BlockScaleGpu, BlockScaleGpu, testing::ValuesIn(shapes()),
                         [](const auto& info) {
                           const FlavorShape& s = info.param;
                           return fmt::format("b{}_{}x{}x{}{}{}{}", s.batch, s.m, s.n, s.k,
                                              s.a_batch_one ? "_ABatch1" : "",
                                              s.b_batch_one ? "_BBatch1" : "",
                                              s.operand_pad ? "_Padded" : "");
                         });

}  // namespace
}  // namespace fusedgemm
