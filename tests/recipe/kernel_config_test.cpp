// choose_kernel_config(): the tile follows the register budget of the accumulators. A
// block-scaled program holds two fp32 fragments per GEMM (the running sum and the K block's
// partial sum), so it takes 64 rows, and its fp8 K step is exactly one 128-wide scale block.
#include "recipe/kernel_config.h"

#include <gtest/gtest.h>

#include <vector>

#include "fusion/analyze.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::recipe {
namespace {

using test::Flavor;
using test::FlavorShape;

struct ConfigCase {
  Flavor flavor;
  FlavorShape shape;
  int tile_m;
  int tile_n;
  int tile_k;
  int stages;
};

TEST(KernelConfig, TileFitsTheAccumulatorsOfEachFlavor) {
  const std::vector<ConfigCase> cases = {
      {Flavor::kPlain, {.m = 256, .n = 256, .k = 128}, 128, 128, 64, 3},
      {Flavor::kPlain, {.m = 64, .n = 256, .k = 128}, 64, 128, 64, 4},
      {Flavor::kGatedMlp, {.m = 256, .n = 256, .k = 128}, 128, 64, 64, 3},
      // 64x128: 64 + 64 registers of fragments; 8 KB of A and 16 KB of B per stage.
      {Flavor::kBlockScaled, {.m = 256, .n = 256, .k = 384}, 64, 128, 128, 4},
      {Flavor::kBlockScaled, {.batch = 3, .m = 200, .n = 144, .k = 272}, 64, 128, 128, 4},
      {Flavor::kBlockScaled, {.m = 1, .n = 256, .k = 384}, 64, 128, 128, 4},
  };
  for (const auto& c : cases) {
    auto fg = test::make_flavor_graph(c.flavor, c.shape);
    ASSERT_TRUE(fg) << fg.status().message();
    SCOPED_TRACE(std::string(test::to_string(c.flavor)) + ": " + test::to_string(c.shape));
    auto analysis = fusion::analyze(fg->graph);
    ASSERT_TRUE(analysis) << analysis.status().message();
    const KernelConfig config = choose_kernel_config(analysis->program);
    EXPECT_EQ(config.tile_m, c.tile_m);
    EXPECT_EQ(config.tile_n, c.tile_n);
    EXPECT_EQ(config.tile_k, c.tile_k);
    EXPECT_EQ(config.stages, c.stages);
    EXPECT_EQ(config.threads, 128);
  }
}

// Two block-scaled GEMMs sharing A: 64x64, so 2 GEMMs x 2 fragments x 32 fit 128 registers.
TEST(KernelConfig, TwoBlockScaledGemmsTakeTileN64) {
  auto fg = test::make_flavor_graph(Flavor::kBlockScaled, {.m = 256, .n = 256, .k = 256});
  ASSERT_TRUE(fg) << fg.status().message();
  auto analysis = fusion::analyze(fg->graph);
  ASSERT_TRUE(analysis) << analysis.status().message();
  fusion::FusionProgram program = analysis->program;
  program.gemms.push_back(program.gemms.front());  // a second GEMM over the same operands
  const KernelConfig config = choose_kernel_config(program);
  EXPECT_EQ(config.tile_m, 64);
  EXPECT_EQ(config.tile_n, 64);
  EXPECT_EQ(config.tile_k, 128);
}

}  // namespace
}  // namespace fusedgemm::recipe
