// The warp-specialized persistent mainloop on the GPU at every kernel shape it can take:
// each CTA tile and consumer split the cost model may choose, alone and in 2-CTA clusters
// along M (B multicast) and N (A multicast), under every flavor whose registers it fits,
// against the fp64 reference with poisoned, guarded outputs; CTAs that run many tiles; K of
// 1 to 3 x stages steps; full aux through TMA or a copy, in 1 to 4 buffers; programmatic dependent
// launch; and a kernel cache warmed with no driver present, hit by a plan on the GPU. Suites named
// *Gpu* carry the ctest label `gpu` and skip without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "api/kernel_build.h"
#include "fusedgemm/context.h"
#include "fusedgemm/plan.h"
#include "fusion/analyze.h"
#include "jit/context.h"
#include "jit/jit_test_util.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "runtime/plan_state.h"
#include "support/call_harness.h"
#include "support/device_call.h"
#include "support/flavor_graphs.h"
#include "support/tuning.h"

namespace fusedgemm::test {
namespace {

constexpr const KernelShape& kColumnHalves64x128 = kKernelShapes[5];
constexpr const KernelShape& kPingPong128 = kKernelShapes[7];
constexpr const KernelShape& kPingPong64x128 = kKernelShapes[9];

class KernelShapeGpu : public OnGpu<> {
 protected:
  // Builds `fg` with `tuning`, runs it once on garbage workspace and poisoned outputs, and
  // checks it. False when the kernel cannot take the tuning for this flavor (refused by
  // kernel_tuning: registers, scale blocks, quantization blocks, cluster parts).
  bool run(const std::string& label, FlavorGraph& fg, const KernelTuning& tuning,
           std::uint64_t seed) {
    SCOPED_TRACE(label);
    // Named before it runs: a kernel that hangs leaves its case as the log's last line.
    std::printf("  case %s\n", label.c_str());
    std::fflush(stdout);
    BuildOptions options{device_};
    options.tuning = tuning;
    options.engine = Engine::kFused;
    auto plan = build(fg.graph, options);
    if (!plan && plan.status().code() == ErrorCode::kInvalidArgument &&
        plan.status().message().rfind("kernel_tuning", 0) == 0) {
      return false;
    }
    EXPECT_TRUE(plan) << plan.status().message();
    if (!plan) return false;
    SCOPED_TRACE(recipe::describe(runtime::PlanAccess::state(plan.value()).recipe.config));
    auto call = CallBuffers::make(fg.graph, seed);
    EXPECT_TRUE(call) << call.status().message();
    if (!call) return true;
    DeviceCall device_call(device_, call.value());
    EXPECT_TRUE(device_call.upload());
    auto bound = plan->bind(device_call.pack());
    EXPECT_TRUE(bound) << bound.status().message();
    if (!bound) return true;
    std::mt19937_64 garbage(seed);
    auto ws = device_call.workspace(plan->workspace_bytes(bound.value()).value(), &garbage);
    EXPECT_TRUE(ws) << ws.status().message();
    const Status s = plan->execute(bound.value(), ws.value(), nullptr);
    EXPECT_TRUE(s) << s.message();
    EXPECT_TRUE(device_call.download());
    EXPECT_TRUE(call->matches_reference(fg.graph));
    EXPECT_TRUE(call->outside_untouched());
    EXPECT_EQ(total_deferrals(plan.value()), 0u);
    return true;
  }
};

// Every shape x cluster, each with the plain flavor and one of the others in turn (so each
// flavor meets several shapes and clusters), at a ragged shape: M, N and K no multiple of
// any tile (K 4.25 steps of 64, 2.1 of 128 for fp8; N a multiple of 16 for the fp8
// outputs), batch 2.
TEST_F(KernelShapeGpu, EveryShapeAndClusterComputesEveryFlavor) {
  const FlavorShape shape{.batch = 2, .m = 300, .n = 528, .k = 272};
  const Flavor others[] = {Flavor::kEpilogue,    Flavor::kAuxFull,    Flavor::kMultiOutput,
                           Flavor::kTapsRow,     Flavor::kTapsColumn, Flavor::kGatedMlp,
                           Flavor::kBlockScaled, Flavor::kQuantized};
  std::uint64_t seed = 100;
  int ran = 0, refused = 0, turn = 0;
  for (const KernelShape& s : kKernelShapes) {
    for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
      // The next flavor this shape and cluster take (one the kernel refuses passes its turn
      // on, so every flavor runs).
      bool other_ran = false;
      for (int tries = 0; tries < 8 && !other_ran; ++tries) {
        const Flavor flavor = others[turn++ % 8];
        auto fg = make_flavor_graph(flavor, shape);
        ASSERT_TRUE(fg) << fg.status().message();
        other_ran = run(fmt::format("{} {} cluster {}x{}", to_string(flavor), s.name, cm, cn),
                        fg.value(), pinned_tuning(s, cm, cn), seed++);
        (other_ran ? ran : refused)++;
      }
      auto plain = make_flavor_graph(Flavor::kPlain, shape);
      ASSERT_TRUE(plain) << plain.status().message();
      EXPECT_TRUE(run(fmt::format("plain {} cluster {}x{}", s.name, cm, cn), plain.value(),
                      pinned_tuning(s, cm, cn), seed++));
      ++ran;
    }
  }
  std::printf("  %d shape x cluster x flavor cases ran, %d refused by kernel_tuning\n", ran,
              refused);
  EXPECT_GE(ran, 2 * static_cast<int>(std::size(kKernelShapes)) * 3);
}

// More tiles than CTAs: each CTA runs several tiles through one ring (phases carried across
// tiles), with taps folding units of different CTAs and consumers, batch folded in.
TEST_F(KernelShapeGpu, CtasRunManyTiles) {
  std::uint64_t seed = 300;
  for (const Flavor flavor : {Flavor::kPlain, Flavor::kTapsRow, Flavor::kTapsColumn}) {
    for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}}) {
      const FlavorShape shape{.batch = 3, .m = 1000, .n = 1000, .k = 128};
      auto fg = make_flavor_graph(flavor, shape);
      ASSERT_TRUE(fg) << fg.status().message();
      // 64x128 tiles: 3 x 16 x 8 = 384 tiles on at most 132 CTAs.
      EXPECT_TRUE(run(fmt::format("{} 64x128n cluster {}x{}", to_string(flavor), cm, cn),
                      fg.value(), pinned_tuning(kColumnHalves64x128, cm, cn), seed++));
    }
  }
}

// Ping-pong consumers (each takes every other tile of its CTA whole, stepping over the
// other's stages): every flavor the kernel takes on it, alone and in both clusters, with
// more tiles than CTAs (an odd count per CTA too: 3 x 8 x 8 = 192 tiles), and K from one
// step to several rings (K 4096 at 1024 tiles: the other consumer's tile skips more than a
// ring of stages).
TEST_F(KernelShapeGpu, PingPongComputesEveryFlavor) {
  const Flavor flavors[] = {Flavor::kPlain,       Flavor::kEpilogue,  Flavor::kAuxScalar,
                            Flavor::kAuxRow,      Flavor::kAuxColumn, Flavor::kAuxFull,
                            Flavor::kMultiOutput, Flavor::kTapsRow,   Flavor::kTapsColumn,
                            Flavor::kTapsFull,    Flavor::kGatedMlp,  Flavor::kQuantized};
  std::uint64_t seed = 600;
  int ran = 0;
  for (const Flavor flavor : flavors) {
    for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
      // A product tap of every point leaves fp32's range past ~10^5 points (taps_full).
      const FlavorShape shape = flavor == Flavor::kTapsFull
                                    ? FlavorShape{.batch = 3, .m = 200, .n = 304, .k = 272}
                                    : FlavorShape{.batch = 3, .m = 1000, .n = 1008, .k = 272};
      auto fg = make_flavor_graph(flavor, shape);
      ASSERT_TRUE(fg) << fg.status().message();
      ran += run(fmt::format("{} 128x128 ping-pong cluster {}x{}", to_string(flavor), cm, cn),
                 fg.value(), pinned_tuning(kPingPong128, cm, cn), seed++);
    }
  }
  for (const auto& [m, k] : {std::pair<std::int64_t, std::int64_t>{520, 8},
                             {520, 64},
                             {520, 200},
                             {520, 776},
                             {4096, 1000}}) {
    auto fg = make_flavor_graph(Flavor::kPlain, {.batch = 1, .m = m, .n = 600, .k = k});
    ASSERT_TRUE(fg) << fg.status().message();
    ran += run(fmt::format("plain M {} K {} 128x128 ping-pong", m, k), fg.value(),
               pinned_tuning(kPingPong128, 2, 1), seed++);
  }
  EXPECT_GE(ran, 30);
}

// Ping-pong 64x128, the one ping-pong unit two GEMMs fit: the gated MLP and the flavors
// whose epilogues it hides, many tiles per CTA (3 x 16 x 8 = 384), alone and in pairs.
TEST_F(KernelShapeGpu, PingPong64x128ComputesTwoGemmsAndHeavyEpilogues) {
  std::uint64_t seed = 650;
  int ran = 0;
  for (const Flavor flavor : {Flavor::kGatedMlp, Flavor::kEpilogue, Flavor::kTapsRow,
                              Flavor::kTapsColumn, Flavor::kQuantized}) {
    for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
      auto fg = make_flavor_graph(flavor, {.batch = 3, .m = 1000, .n = 1008, .k = 272});
      ASSERT_TRUE(fg) << fg.status().message();
      ran += run(fmt::format("{} 64x128 ping-pong cluster {}x{}", to_string(flavor), cm, cn),
                 fg.value(), pinned_tuning(kPingPong64x128, cm, cn), seed++);
    }
  }
  EXPECT_EQ(ran, 15);
}

// Tiles 160 columns wide: on 64x160 units (a tuning) every flavor the tile takes, and the
// plain GEMM on ping-pong 128x160 units (160 accumulators; the model's for light epilogues
// of 16-bit operands), bf16 and fp8, alone and in clusters, many tiles per CTA, ragged M
// and N (N 1000: six tiles and a 40-column tail), batch 3, K 4.25 steps; bf16 sub-tiles of
// 64-byte rows (kernels/epilogue_store.cuh), an N-major bf16 output stored directly, and
// K = 8 (one step).
TEST_F(KernelShapeGpu, Tile160ComputesEveryFlavor) {
  std::uint64_t seed = 800;
  int ran = 0;
  const FlavorShape shape{.batch = 3, .m = 1000, .n = 1000, .k = 272};
  for (const Flavor flavor : all_flavors()) {
    for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
      // A product tap of every point leaves fp32's range past ~10^5 points (taps_full).
      auto fg =
          make_flavor_graph(flavor, flavor == Flavor::kTapsFull
                                        ? FlavorShape{.batch = 3, .m = 200, .n = 328, .k = 272}
                                        : shape);
      ASSERT_TRUE(fg) << fg.status().message();
      ran += run(fmt::format("{} 128x160 cluster {}x{}", to_string(flavor), cm, cn), fg.value(),
                 pinned_tuning(128, 160, false, cm, cn), seed++);
    }
  }
  // fp8 operands: K 2.1 steps of 128 (m64n160k32), N a multiple of 16.
  const FlavorShape fp8{
      .batch = 3, .m = 1000, .n = 1008, .k = 272, .operand_type = DataType::kFp8E4M3};
  for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
    auto fg = make_flavor_graph(Flavor::kPlain, fp8);
    ASSERT_TRUE(fg) << fg.status().message();
    EXPECT_TRUE(run(fmt::format("plain fp8 128x160 cluster {}x{}", cm, cn), fg.value(),
                    pinned_tuning(128, 160, false, cm, cn), seed++));
    ++ran;
  }
  for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
    for (const FlavorShape& s :
         {shape, fp8, FlavorShape{.batch = 1, .m = 520, .n = 1000, .k = 8},
          FlavorShape{.batch = 2, .m = 300, .n = 520, .k = 272, .out_major = Major::kM}}) {
      auto fg = make_flavor_graph(Flavor::kPlain, s);
      ASSERT_TRUE(fg) << fg.status().message();
      EXPECT_TRUE(run(fmt::format("plain {} 128x160 ping-pong cluster {}x{}", to_string(s), cm, cn),
                      fg.value(), pinned_tuning(128, 160, false, cm, cn, std::nullopt, true),
                      seed++));
      ++ran;
    }
  }
  // Every flavor but the two-GEMM ones (two 64x160 accumulators exceed 128), block-scaled
  // (tile_n 64 or 128) and quantized (blocks of 128 columns), each on three clusters; fp8
  // on three; four ping-pong shapes on three.
  EXPECT_GE(ran, 10 * 3 + 3 + 12);
}

// K of 1 step to 3 x stages steps (the 128x256 ring holds 4 stages), and K tails.
TEST_F(KernelShapeGpu, KFromOneStepToThreeRings) {
  std::uint64_t seed = 400;
  for (const std::int64_t k : {8, 64, 72, 128, 256, 512, 768, 776}) {
    for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}}) {
      auto fg = make_flavor_graph(Flavor::kPlain, {.batch = 1, .m = 520, .n = 600, .k = k});
      ASSERT_TRUE(fg) << fg.status().message();
      EXPECT_TRUE(run(fmt::format("plain K {} cluster {}x{}", k, cm, cn), fg.value(),
                      pinned_tuning(kKernelShapes[0], cm, cn), seed++));
    }
  }
}

// The epilogue stores a 16- or 32-bit N-major output through TMA where the call's layout
// lets a descriptor write it, and directly where not (kernels/epilogue_store.cuh): rows of
// 600 bf16 (1200 bytes, a multiple of 16) take TMA, rows of 604 (1208 bytes) the direct
// path, at every tile shape; both against the reference with guarded outputs.
TEST_F(KernelShapeGpu, StoresThroughTmaOrDirectlyByTheCallsLayout) {
  std::uint64_t seed = 700;
  for (const std::int64_t n : {600, 604}) {
    for (const KernelShape& shape : kKernelShapes) {
      auto fg = make_flavor_graph(Flavor::kPlain, {.batch = 2, .m = 333, .n = n, .k = 200});
      ASSERT_TRUE(fg) << fg.status().message();
      EXPECT_TRUE(run(fmt::format("plain N {} tile {}", n, shape.name), fg.value(),
                      pinned_tuning(shape, 1, 1), seed++));
    }
  }
}

// A full aux input is read through shared memory (kernels/epilogue_aux_tiles.cuh): TMA-loaded
// where the call's layout lets a descriptor read it, rows of 600 bf16 (1200 bytes), copied in
// by the warpgroup where not, rows of 604; declared with the problem's batch or broadcast
// from batch 1; at every tile shape; both against the reference with guarded outputs.
TEST_F(KernelShapeGpu, ReadsFullAuxThroughTmaOrACopyByTheCallsLayout) {
  std::uint64_t seed = 800;
  for (const std::int64_t n : {600, 604}) {
    for (const KernelShape& shape : kKernelShapes) {
      const bool batch_one = (seed % 2) == 1;
      auto fg = make_flavor_graph(
          Flavor::kAuxFull, {.batch = 2, .m = 333, .n = n, .k = 200, .aux_batch_one = batch_one});
      ASSERT_TRUE(fg) << fg.status().message();
      EXPECT_TRUE(run(
          fmt::format("aux_full N {} tile {}{}", n, shape.name, batch_one ? " aux batch 1" : ""),
          fg.value(), pinned_tuning(shape, 1, 1), seed++));
    }
  }
}

// Aux buffers past and below the model's (KernelTuning::aux_buffers): 1, 2 and 4 per aux, the
// parities of each buffer's fills carried from unit to unit (144 to 288 tiles over 132 CTAs
// or fewer, 2x1 clusters), and 0 (read from global memory element by element); row halves
// and ping-pong, 64 to 128 rows a unit.
TEST_F(KernelShapeGpu, AuxBuffersReadEveryUnit) {
  std::uint64_t seed = 850;
  const std::vector<std::pair<const char*, KernelTuning>> tiles = {
      {"128x256 2x1", pinned_tuning(128, 256, false, 2, 1)},
      {"ping-pong 128x128", pinned_tuning(128, 128, false, 1, 1, std::nullopt, true)},
      {"ping-pong 64x128 2x1", pinned_tuning(64, 128, false, 2, 1, std::nullopt, true)},
      {"ping-pong 128x160 2x1", pinned_tuning(128, 160, false, 2, 1, std::nullopt, true)}};
  auto fg = make_flavor_graph(Flavor::kAuxFull, {.batch = 2, .m = 1100, .n = 1800, .k = 200});
  ASSERT_TRUE(fg) << fg.status().message();
  for (const auto& [name, tile] : tiles) {
    for (const int buffers : {0, 1, 2, 4}) {
      KernelTuning tuning = tile;
      tuning.aux_buffers = buffers;
      EXPECT_TRUE(run(fmt::format("aux_full tile {} {} aux buffers", name, buffers), fg.value(),
                      tuning, seed++));
    }
  }
}

// Staging buffers past the default (KernelTuning::staging_buffers): a sub-tile waits only for
// the store B - 1 before it and a unit for the previous unit's stores. More tiles than CTAs
// (144 to 288 at 1100 x 1800 x 2), so units follow units on one CTA; one staged output
// (plain, the bf16 GELU epilogue) and two (multi_output's fp32 and fp16, the group waits
// interleaved), row halves and ping-pong, TMA-stored rows of 3,600 to 7,200 bytes; ping-pong
// 128x160's sub-tiles of 64-byte rows, five to a unit row.
TEST_F(KernelShapeGpu, DeeperStagingStoresEveryUnit) {
  std::uint64_t seed = 900;
  // The fewest buffers each tile is run with here: 2 is 128x256's default, which every
  // other suite runs.
  const std::vector<std::tuple<const char*, KernelTuning, int>> tiles = {
      {"128x256 2x1", pinned_tuning(128, 256, false, 2, 1), 3},
      {"ping-pong 64x256 2x1", pinned_tuning(64, 256, false, 2, 1, std::nullopt, true), 2},
      {"ping-pong 128x128", pinned_tuning(128, 128, false, 1, 1, std::nullopt, true), 2},
      {"ping-pong 128x160 2x1", pinned_tuning(128, 160, false, 2, 1, std::nullopt, true), 2}};
  for (const Flavor flavor : {Flavor::kPlain, Flavor::kEpilogue, Flavor::kMultiOutput}) {
    auto fg = make_flavor_graph(flavor, {.batch = 2, .m = 1100, .n = 1800, .k = 200});
    ASSERT_TRUE(fg) << fg.status().message();
    for (const auto& [name, tile, fewest] : tiles) {
      // Two staged outputs of 8 buffers each do not fit beside a ring.
      for (const int buffers : {2, 3, 4, flavor == Flavor::kMultiOutput ? 4 : 8}) {
        if (buffers < fewest) continue;
        KernelTuning tuning = tile;
        tuning.staging_buffers = buffers;
        EXPECT_TRUE(
            run(fmt::format("{} tile {} {} staging buffers", to_string(flavor), name, buffers),
                fg.value(), tuning, seed++));
      }
    }
  }
}

// Programmatic dependent launch: the kernel waits (griddepcontrol.wait) for the previous
// grid on the stream before it touches memory, so calls made back to back are each right.
TEST_F(KernelShapeGpu, DependentLaunchComputesTheSame) {
  auto fg = make_flavor_graph(Flavor::kTapsRow, {.batch = 2, .m = 600, .n = 700, .k = 256});
  ASSERT_TRUE(fg) << fg.status().message();
  KernelTuning tuning;
  tuning.dependent_launch = true;
  EXPECT_TRUE(run("taps_row dependent launch", fg.value(), tuning, 500));
  EXPECT_TRUE(run("taps_row dependent launch again", fg.value(), tuning, 501));
}

// A cache warmed by compiling with no device (driver version unknown, as `fusedgemm
// compile` does on a build machine) is hit by build() on the GPU: the driver is not in the
// key.
TEST_F(KernelShapeGpu, ACacheWarmedWithoutADriverIsHit) {
  const jit::testing::TempDir dir;
  auto fg = make_flavor_graph(Flavor::kEpilogue, {.batch = 1, .m = 256, .n = 256, .k = 128});
  ASSERT_TRUE(fg) << fg.status().message();
  {
    auto warm = jit::testing::hermetic_context(dir.path());
    ASSERT_TRUE(warm) << warm.status().message();
    auto analysis = fusion::analyze(fg->graph);
    ASSERT_TRUE(analysis) << analysis.status().message();
    auto program = std::make_shared<const fusion::FusionProgram>(analysis->program);
    auto config = recipe::choose_kernel_config(*program, device_->multiprocessor_count());
    ASSERT_TRUE(config) << config.status().message();
    auto recipe = recipe::make_recipe(program, config.value());
    ASSERT_TRUE(recipe) << recipe.status().message();
    auto kernel = api::compile_fused_kernel(recipe.value(), *warm.value());
    ASSERT_TRUE(kernel) << kernel.status().message();
    EXPECT_EQ(warm.value()->counters().compiles, 1);
  }
  auto context = jit::testing::hermetic_context(dir.path());
  ASSERT_TRUE(context) << context.status().message();
  auto plan = build(fg->graph, BuildOptions{device_, context.value()});
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(context.value()->counters().compiles, 0);
  EXPECT_EQ(context.value()->counters().disk_hits, 1);
}

}  // namespace
}  // namespace fusedgemm::test
