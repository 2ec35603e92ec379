// choose_kernel_config(): the cost model picks the tile by waves over the device's
// multiprocessors, padding and shared-memory traffic; the register budget of the
// accumulators (and of the epilogue's held values) bounds the tile of every flavor; a
// tuning replaces its pick or is refused naming what is legal.
#include "recipe/kernel_config.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fusedgemm/graph.h"
#include "fusedgemm/graph_json.h"
#include "fusion/analyze.h"
#include "kernels/kernel_args.h"
#include "reference/resize.h"
#include "support/flavor_graphs.h"
#include "support/tuning.h"

namespace fusedgemm::recipe {
namespace {

using test::Flavor;
using test::FlavorShape;

// The H200's multiprocessors, and a smaller part of the same architecture.
constexpr int kH200Multiprocessors = 132;
constexpr int kSmallPart = 16;

fusion::FusionProgram program_of(Flavor flavor, const FlavorShape& shape) {
  auto fg = test::make_flavor_graph(flavor, shape);
  EXPECT_TRUE(fg) << fg.status().message();
  if (!fg) return {};
  auto analysis = fusion::analyze(fg->graph);
  EXPECT_TRUE(analysis) << analysis.status().message();
  return analysis ? analysis->program : fusion::FusionProgram{};
}

KernelConfig chosen(const fusion::FusionProgram& program, int sm_count,
                    const KernelTuning& tuning = {}) {
  auto config = choose_kernel_config(program, sm_count, tuning);
  EXPECT_TRUE(config) << config.status().message();
  return config ? config.value() : KernelConfig{};
}

struct Choice {
  Flavor flavor;
  FlavorShape shape;
  int tile_m;
  int tile_n;
  ConsumerSplit split;
  int cluster_m;
  int cluster_n;
};

// What the model picks for the H200 and why, shape by shape.
TEST(KernelConfig, PicksTheTileByWavesAndSharedMemoryTraffic) {
  constexpr auto kM = ConsumerSplit::kM;
  constexpr auto kP = ConsumerSplit::kPingPong;
  const std::vector<Choice> cases = {
      // Many waves of long tiles: the consumers share 128x256 tiles, two B-sharing CTAs a
      // pair. Ping-pong 64x256 fills the last wave better, but its mainloop writes and
      // reads more shared memory per MMA than the MMAs take (measured 0.67-0.68 of cuBLASLt
      // at 16384^3 where 128x256 ran 1.00-1.03, docs/PERF.md runs 26-27); ping-pong 128x160
      // fills it too, but past K = 4096 it ran 6% behind (run 39).
      {Flavor::kPlain, {.m = 16384, .n = 16384, .k = 16384}, 128, 256, kM, 2, 1},
      // Up to K = 4096, ping-pong 128x160 runs at the MMA rate and fills the waves better:
      // 517 us against 534 on 128x256 at 4096 x 11008 x 4096, 3-5% ahead at 14336 columns
      // (locked clocks, H100, docs/PERF.md runs 38-39).
      {Flavor::kPlain, {.m = 4096, .n = 11008, .k = 4096}, 128, 160, kP, 2, 1},
      {Flavor::kPlain, {.m = 4096, .n = 14336, .k = 4096}, 128, 160, kP, 2, 1},
      // ...and where a CTA runs few tiles, 128x256 pays the tile switch half as often
      // (measured 0.92-0.99 of cuBLASLt at 2048^3 and 4096^3 where ping-pong 64x256
      // measured 0.82-0.96, docs/PERF.md runs 11-12). 64x128 units would fill the waves as
      // well, but TMA's writes and wgmma's reads of a 64-column unit exceed shared memory's
      // bandwidth (measured 0.67 of cuBLASLt).
      {Flavor::kPlain, {.m = 4096, .n = 4096, .k = 4096}, 128, 256, kM, 2, 1},
      {Flavor::kPlain, {.m = 2048, .n = 2048, .k = 2048}, 128, 256, kM, 2, 1},
      // A tile that fills its last wave much better wins: 128x192 at N = 8192 is 20.9
      // waves of 21, 128x256 15.5 of 16.
      {Flavor::kPlain, {.m = 8192, .n = 8192, .k = 8192}, 128, 192, kM, 2, 1},
      // At short K a unit is few K steps and the tile switch a large share of it: ping-pong
      // hides it behind the other consumer's MMAs (64x256: 0.84-0.87 of cuBLASLt at K = 512
      // where 128x256 ran 0.78-0.84, runs 26-27), and a plain epilogue takes 128x160 units
      // (160 accumulators), whose 128 rows read less shared memory per MMA than 64x256: at
      // K = 1024 215-217 us against 231-233 on 128x256 at locked clocks (docs/PERF.md run
      // 36; K = 512 not measured on it yet).
      {Flavor::kPlain, {.m = 8192, .n = 8192, .k = 1024}, 128, 160, kP, 2, 1},
      {Flavor::kPlain, {.m = 8192, .n = 8192, .k = 512}, 128, 160, kP, 2, 1},
      // A GELU epilogue (~30 issue slots an element) hid behind the other consumer's MMAs in
      // ping-pong 64x256 at 4096 x 11008 x 4096 (0.87-0.95 of cuBLASLt's GELU_BIAS against
      // 0.89-0.90 on 128x256, run 27), whose 20.9 waves of 21 fill the device; 128x256's
      // 10.4 waves of 11 now end in a wave of tiles split K in two, 10.5 waves' time
      // (docs/PERF.md run 35)...
      {Flavor::kEpilogue, {.m = 4096, .n = 11008, .k = 4096}, 128, 256, kM, 2, 1},
      // ...nor at K = 8192, where ping-pong's mainloop loses more than the epilogue costs
      // (0.79-0.87 against 0.96-0.97 on 128x192, runs 26-27).
      {Flavor::kEpilogue, {.m = 8192, .n = 8192, .k = 8192}, 128, 192, kM, 2, 1},
      // So does a tap's once-a-tile fence and arrival (~2 us): GEMM + row taps at K = 1024
      // measured 0.89-0.93 of the unfused sequence in ping-pong, 0.85-0.87 on 128x256 (runs
      // 14, 26-27); 128-row ping-pong units expose more of it (ping-pong 128x128 276 us
      // against 260, locked clocks, run 39).
      {Flavor::kTapsRow, {.m = 8192, .n = 8192, .k = 1024}, 64, 256, kP, 1, 1},
      // 64 tiles of 128x128 on 132 SMs: one wave of small tiles beats one of large ones,
      // each CTA's one tile read by one consumer (A once, not once per column half).
      {Flavor::kPlain, {.m = 1024, .n = 1024, .k = 1024}, 64, 128, kP, 2, 1},
      // A decode-size M: 64-row tiles, A shared by the cluster's pair of column tiles.
      {Flavor::kPlain, {.m = 16, .n = 4096, .k = 4096}, 64, 128, kP, 1, 2},
      // One wave of tiles: a ping-pong CTA would run one unit on one consumer (0.82 of
      // cuBLASLt at 512 x 4096 x 4096, 0.90-0.91 at 128 x 11008 x 4096, where shared 128x128
      // tiles ran 0.92-0.96 and 0.96, run 27). Ping-pong 64x128 there, a wave and 20 tiles
      // split three ways, ran 8% behind 128x128 (docs/PERF.md run 35): no split after fewer
      // than two whole waves.
      {Flavor::kPlain, {.m = 128, .n = 11008, .k = 4096}, 128, 128, kM, 1, 2},
      {Flavor::kPlain, {.m = 512, .n = 4096, .k = 4096}, 128, 128, kM, 2, 1},
      // Two GEMMs: both accumulators of 64x128 units fit 128 registers; at long K the
      // consumers share 128x128 tiles...
      {Flavor::kGatedMlp, {.m = 4096, .n = 4096, .k = 4096}, 128, 128, kM, 2, 1},
      // ...and at short K too: ping-pong 64x128 hides the silu * mul epilogue behind the
      // other consumer's MMAs, but its 64-row units read B twice as often; the two measured
      // even at 8192^2 x 1024 (433.9 against 432.9 us, locked clocks, docs/PERF.md run 39).
      {Flavor::kGatedMlp, {.m = 8192, .n = 8192, .k = 1024}, 128, 128, kM, 2, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(test::to_string(c.flavor)) + ": " + test::to_string(c.shape));
    const KernelConfig config = chosen(program_of(c.flavor, c.shape), kH200Multiprocessors);
    SCOPED_TRACE(describe(config));
    EXPECT_EQ(config.tile_m, c.tile_m);
    EXPECT_EQ(config.tile_n, c.tile_n);
    EXPECT_EQ(config.split, c.split);
    EXPECT_EQ(config.cluster_m, c.cluster_m);
    EXPECT_EQ(config.cluster_n, c.cluster_n);
    EXPECT_EQ(config.threads, 384);
    EXPECT_EQ(config.sm_count, kH200Multiprocessors);
  }
}

// One row-amax tap (the benchmark's GEMM + row-amax): a tap's arrival is exposed where the
// other consumer's K steps are shorter than it, and a 128-row unit exposes more of it. Ping-pong
// 128x128 ran 6.1% behind ping-pong 64x256 at 8192^2 x 1024 and 5-6% ahead of it at K =
// 4096, where 128x256 ran faster still (locked clocks, docs/PERF.md run 39).
TEST(KernelConfig, RowTapsTake64RowPingPongUnitsAtShortK) {
  const auto row_amax = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    Graph g;
    const auto input = [&](const char* name, std::vector<std::int64_t> dims,
                           std::vector<std::int64_t> strides) {
      return g.tensor(TensorAttributes()
                          .set_name(name)
                          .set_dim(std::move(dims))
                          .set_stride(std::move(strides))
                          .set_data_type(DataType::kBFloat16));
    };
    Tensor d = g.matmul(input("A", {1, m, k}, {m * k, k, 1}), input("B", {1, k, n}, {k * n, 1, k}));
    d->set_name("D").set_data_type(DataType::kBFloat16).set_output(true);
    d->set_dim({1, m, n}).set_stride({m * n, n, 1});
    Tensor amax = g.reduction(d, ReductionAttributes().set_mode(ReductionMode::kAmax));
    amax->set_name("T").set_dim({1, m, 1}).set_stride({m, 1, 1}).set_output(true);
    amax->set_data_type(DataType::kFloat32);
    EXPECT_TRUE(g.validate());
    auto analysis = fusion::analyze(g);
    EXPECT_TRUE(analysis) << analysis.status().message();
    return analysis ? analysis->program : fusion::FusionProgram{};
  };
  for (const auto& [m, k] : {std::pair<std::int64_t, std::int64_t>{8192, 1024}, {16384, 512}}) {
    const KernelConfig config = chosen(row_amax(m, 8192, k), kH200Multiprocessors);
    EXPECT_EQ(config.split, ConsumerSplit::kPingPong) << describe(config);
    EXPECT_EQ(config.unit_m(), 64) << describe(config);
  }
  const KernelConfig long_k = chosen(row_amax(4096, 14336, 4096), kH200Multiprocessors);
  EXPECT_EQ(long_k.split, ConsumerSplit::kM) << describe(long_k);
  EXPECT_EQ(long_k.tile_n, 256) << describe(long_k);
}

// Full 16-bit aux inputs are read through shared memory, TMA-loaded sub-tile by sub-tile
// (kernels/epilogue_aux_tiles.cuh), their DRAM bytes and each round of buffers' latency in
// the epilogue's cost: measured at locked clocks (H100, docs/PERF.md run 48), six aux ran
// fastest on ping-pong 128x128 at 4096^3 (302.8 us; 128x192 357.4, 256x128 479.3) and on
// ping-pong 64x128 with two buffers each at 8192^2 x 512 (434.1 us; one buffer 490.6). What
// the kernel cannot fit beside its ring is read from global memory: a seventh aux, and every
// aux where even one buffer each leaves too few stages.
TEST(KernelConfig, FullAuxReadThroughSharedMemoryWhereTheRingKeepsItsStages) {
  const auto residual_adds = [](std::int64_t m, std::int64_t n, std::int64_t k, int aux) {
    Graph g;
    const auto input = [&](std::string name, std::vector<std::int64_t> dims,
                           std::vector<std::int64_t> strides) {
      return g.tensor(TensorAttributes()
                          .set_name(std::move(name))
                          .set_dim(std::move(dims))
                          .set_stride(std::move(strides))
                          .set_data_type(DataType::kBFloat16));
    };
    Tensor v = g.matmul(input("A", {1, m, k}, {m * k, k, 1}), input("B", {1, k, n}, {k * n, 1, k}));
    for (int i = 0; i < aux; ++i) {
      v = g.pointwise(v, input(fmt::format("X{}", i), {1, m, n}, {m * n, n, 1}),
                      PointwiseAttributes().set_mode(PointwiseMode::kAdd));
    }
    v->set_name("D").set_data_type(DataType::kBFloat16).set_output(true);
    v->set_dim({1, m, n}).set_stride({m * n, n, 1});
    EXPECT_TRUE(g.validate());
    auto analysis = fusion::analyze(g);
    EXPECT_TRUE(analysis) << analysis.status().message();
    return analysis ? analysis->program : fusion::FusionProgram{};
  };
  const auto one_program = residual_adds(8192, 8192, 512, 1);
  const KernelConfig one = chosen(one_program, kH200Multiprocessors);
  EXPECT_EQ(one.loaded_aux, 1) << describe(one);
  EXPECT_EQ(one.split, ConsumerSplit::kPingPong) << describe(one);

  const auto six_short = residual_adds(8192, 8192, 512, 6);
  const KernelConfig six = chosen(six_short, kH200Multiprocessors);
  EXPECT_EQ(six.loaded_aux, 6) << describe(six);
  EXPECT_EQ(six.split, ConsumerSplit::kPingPong) << describe(six);
  EXPECT_EQ(six.unit_m() * six.unit_n(), 64 * 128) << describe(six);
  EXPECT_EQ(six.aux_buffers, 2) << describe(six);

  const KernelConfig square = chosen(residual_adds(4096, 4096, 4096, 6), kH200Multiprocessors);
  EXPECT_EQ(square.loaded_aux, 6) << describe(square);
  EXPECT_EQ(square.split, ConsumerSplit::kPingPong) << describe(square);
  EXPECT_EQ(square.unit_m() * square.unit_n(), 128 * 128) << describe(square);

  const auto eight_program = residual_adds(4096, 4096, 4096, 8);
  const KernelConfig eight = chosen(eight_program, kH200Multiprocessors);
  EXPECT_EQ(eight.loaded_aux, kernels::kMaxTmaAuxLoads) << describe(eight);
  EXPECT_EQ(tma_load_aux(eight_program).size(), std::size_t{kernels::kMaxTmaAuxLoads});

  // 0 buffers: every aux from global memory.
  KernelTuning direct;
  direct.aux_buffers = 0;
  EXPECT_EQ(chosen(six_short, kH200Multiprocessors, direct).loaded_aux, 0);
  // A ring of 4 stages of 128x256 leaves no room for six aux buffers beside it.
  KernelTuning deep = test::pinned_tuning(128, 256, false, 2, 1);
  deep.stages = 4;
  const KernelConfig crowded = chosen(six_short, kH200Multiprocessors, deep);
  EXPECT_EQ(crowded.loaded_aux, 0) << describe(crowded);
  EXPECT_EQ(crowded.stages, 4) << describe(crowded);
  // Asked for where it cannot be: refused, naming the field and what is legal.
  // Out of range on any graph, with or without full aux.
  const auto plain_program = program_of(Flavor::kPlain, {.m = 512, .n = 512, .k = 512});
  for (const int hostile :
       {5, -1, std::numeric_limits<int>::max(), std::numeric_limits<int>::min()}) {
    KernelTuning tuning;
    tuning.aux_buffers = hostile;
    for (const auto* program : {&six_short, &plain_program}) {
      auto refused = choose_kernel_config(*program, kH200Multiprocessors, tuning);
      ASSERT_FALSE(refused) << hostile;
      EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(refused.status().message().find(fmt::format(
                    "aux_buffers {}; legal: 0 (aux read from global memory) to 4", hostile)),
                std::string::npos)
          << refused.status().message();
    }
  }
  // In range, but more than a unit has sub-tiles (a 64x64 unit has 2 of a bf16 aux).
  KernelTuning four = test::pinned_tuning(128, 64, false, 1, 1);
  four.aux_buffers = 4;
  auto refused = choose_kernel_config(six_short, kH200Multiprocessors, four);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("4 buffers per loaded aux; legal: 1 to 4 and at most "
                                            "a unit's 2 sub-tiles"),
            std::string::npos)
      << refused.status().message();
  KernelTuning two;
  two.aux_buffers = 2;
  auto plain = choose_kernel_config(plain_program, kH200Multiprocessors, two);
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.status().message().find("aux_buffers is 2, but graph"), std::string::npos)
      << plain.status().message();
}

// A scalar aux is read once per unit, so it costs a tile nothing per element: fp8 with
// per-tensor scales (two scalar multiplies) at 4096^3 takes 128x256 as plain bf16 does
// (measured 0.90-0.95 of cuBLASLt fp8 where ping-pong 64x256 measured 0.87-0.88 in the same
// runs, docs/PERF.md run 21). Charged per element as a full aux, the scales tipped it to
// ping-pong.
TEST(KernelConfig, ScalarAuxCostsNothingPerElement) {
  auto graph = load_graph(std::string(FUSEDGEMM_EXAMPLES_DIR) + "/fp8_per_tensor.json");
  ASSERT_TRUE(graph) << graph.status().message();
  ASSERT_TRUE(graph->validate().is_ok());
  const Status resized = reference::resize_graph(graph.value(), {1, 4096, 4096, 4096, {}, {}});
  ASSERT_TRUE(resized.is_ok()) << resized.message();
  ASSERT_TRUE(graph->validate().is_ok());
  auto analysis = fusion::analyze(graph.value());
  ASSERT_TRUE(analysis) << analysis.status().message();
  const KernelConfig config = chosen(analysis->program, kH200Multiprocessors);
  EXPECT_EQ(config.tile_m, 128) << describe(config);
  EXPECT_EQ(config.tile_n, 256) << describe(config);
  EXPECT_EQ(config.split, ConsumerSplit::kM) << describe(config);
}

// The multiprocessor count is the device's: fewer SMs fill with fewer, larger tiles.
TEST(KernelConfig, FollowsTheDevicesMultiprocessorCount) {
  const auto program = program_of(Flavor::kPlain, {.m = 1024, .n = 1024, .k = 1024});
  const KernelConfig many = chosen(program, kH200Multiprocessors);
  const KernelConfig few = chosen(program, kSmallPart);
  EXPECT_LT(many.tile_m * many.tile_n, few.tile_m * few.tile_n)
      << describe(many) << " vs " << describe(few);
  // Two short tiles a CTA on few SMs: the largest tile, paying the tile switch least.
  EXPECT_EQ(few.tile_m * few.tile_n, 128 * 256) << describe(few);
}

// Every flavor's tile keeps the accumulators (two fragments when block-scaled) within 128
// per consumer thread, fills the ring with as many stages as fit, and passes the legality
// check the generator applies.
TEST(KernelConfig, EveryFlavorFitsTheRegisterBudget) {
  for (const Flavor flavor : test::all_flavors()) {
    for (const FlavorShape& shape : {FlavorShape{.m = 256, .n = 256, .k = 384},
                                     FlavorShape{.m = 4096, .n = 4096, .k = 4096}}) {
      SCOPED_TRACE(std::string(test::to_string(flavor)) + ": " + test::to_string(shape));
      const auto program = program_of(flavor, shape);
      const KernelConfig config = chosen(program, kH200Multiprocessors);
      SCOPED_TRACE(describe(config));
      EXPECT_FALSE(config_violation(program, config).has_value());
      const bool block_scaled = program.operands[0].block_scale.has_value();
      const int fragments = block_scaled ? 2 : 1;
      EXPECT_LE(fragments * static_cast<int>(program.gemms.size()) * config.unit_m() *
                    config.unit_n() / 128,
                128);
      if (block_scaled) {
        EXPECT_EQ(config.tile_k, 128);  // one K step per 128-wide scale block
        EXPECT_EQ(config.unit_m(), 64);
        EXPECT_LE(config.tile_n, 128);
      }
      // One more stage would not fit next to the epilogue's scratch.
      KernelConfig deeper = config;
      ++deeper.stages;
      EXPECT_TRUE(deeper.stages > 8 || config_violation(program, deeper).has_value());
    }
  }
}

// A unit of 160 accumulators (ping-pong 128x160) is the model's only for a light epilogue of
// 16-bit operands: the plain bf16 GEMM at 8192^2 x 1024 takes it; a GELU epilogue and
// several outputs (which spill there), fp8 operands (measured slower on it) and an N-major B
// do not; a tuning still gets it where it is legal.
TEST(KernelConfig, WideUnitsOnlyForLightEpiloguesOf16BitOperands) {
  const FlavorShape short_k{.m = 8192, .n = 8192, .k = 1024};
  const auto wide = [](const KernelConfig& c) { return c.unit_m() * c.unit_n() / 128 > 128; };
  EXPECT_TRUE(wide(chosen(program_of(Flavor::kPlain, short_k), kH200Multiprocessors)));
  FlavorShape fp8 = short_k;
  fp8.operand_type = DataType::kFp8E4M3;
  FlavorShape n_major = short_k;
  n_major.b_major = fusion::Major::kN;
  for (const auto& [flavor, shape] :
       {std::pair{Flavor::kEpilogue, short_k}, std::pair{Flavor::kMultiOutput, short_k},
        std::pair{Flavor::kPlain, fp8}, std::pair{Flavor::kPlain, n_major}}) {
    SCOPED_TRACE(std::string(test::to_string(flavor)) + ": " + test::to_string(shape));
    const KernelConfig config = chosen(program_of(flavor, shape), kH200Multiprocessors);
    EXPECT_FALSE(wide(config)) << describe(config);
  }
  KernelTuning tuning;
  tuning.tile_m = 128;
  tuning.tile_n = 160;
  tuning.ping_pong = true;
  auto tuned =
      choose_kernel_config(program_of(Flavor::kEpilogue, short_k), kH200Multiprocessors, tuning);
  ASSERT_TRUE(tuned.is_ok()) << tuned.status().message();
  EXPECT_TRUE(wide(tuned.value())) << describe(tuned.value());
}

// Ping-pong keeps a second staging buffer where the ring loses no stage to it: 128x160's
// unit stores ten sub-tiles of 64-byte rows, each waiting for its own store's read with one
// buffer (8192^2 x 512: 132.2 us with one, 120.1 with two at locked clocks, docs/PERF.md run
// 38); 64x256's ring would go from 5 stages to 4. Consumers sharing a tile keep 2.
TEST(KernelConfig, PingPongStagesTwoBuffersWhereTheRingKeepsItsStages) {
  const auto program = program_of(Flavor::kPlain, {.m = 8192, .n = 8192, .k = 512});
  const KernelConfig wide = chosen(program, kH200Multiprocessors);
  ASSERT_EQ(wide.split, ConsumerSplit::kPingPong) << describe(wide);
  ASSERT_EQ(wide.tile_n, 160) << describe(wide);
  EXPECT_EQ(wide.staging_buffers, 2) << describe(wide);
  KernelConfig one = wide;  // one buffer would not make room for a stage more
  one.staging_buffers = 1;
  ++one.stages;
  EXPECT_TRUE(config_violation(program, one).has_value()) << describe(one);

  const KernelConfig narrow = chosen(program, kH200Multiprocessors,
                                     test::pinned_tuning(64, 256, false, 2, 1, std::nullopt, true));
  EXPECT_EQ(narrow.staging_buffers, 1) << describe(narrow);
  KernelConfig two = narrow;  // two buffers would not fit beside its stages
  two.staging_buffers = 2;
  EXPECT_TRUE(config_violation(program, two).has_value()) << describe(two);

  const KernelConfig shared =
      chosen(program, kH200Multiprocessors, test::pinned_tuning(128, 256, false, 2, 1));
  EXPECT_EQ(shared.staging_buffers, 2) << describe(shared);
}

// Two block-scaled GEMMs sharing A: 64x64 units, so 2 GEMMs x 2 fragments x 32 fit.
TEST(KernelConfig, TwoBlockScaledGemmsTakeNarrowUnits) {
  fusion::FusionProgram program =
      program_of(Flavor::kBlockScaled, {.m = 4096, .n = 4096, .k = 4096});
  program.gemms.push_back(program.gemms.front());  // a second GEMM over the same operands
  const KernelConfig config = chosen(program, kH200Multiprocessors);
  EXPECT_EQ(config.unit_m(), 64);
  EXPECT_EQ(config.unit_n(), 64);
  EXPECT_EQ(config.tile_k, 128);
}

// Five GEMMs fit no tile: the generator's limit, a decline (kUnavailable, kernel_config).
TEST(KernelConfig, AProgramNoTileFitsIsUnavailable) {
  fusion::FusionProgram program = program_of(Flavor::kGatedMlp, {.m = 256, .n = 256, .k = 64});
  while (program.gemms.size() < 5) program.gemms.push_back(program.gemms.front());
  auto config = choose_kernel_config(program, kH200Multiprocessors);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(config.status().message().find("kernel_config: graph"), std::string::npos)
      << config.status().message();
}

TEST(KernelConfig, TuningReplacesThePick) {
  const auto program = program_of(Flavor::kPlain, {.m = 4096, .n = 4096, .k = 4096});
  KernelTuning tuning;
  tuning.tile_m = 256;
  tuning.tile_n = 128;
  tuning.cluster_m = 1;
  tuning.cluster_n = 2;
  tuning.stages = 3;
  tuning.dependent_launch = true;
  const KernelConfig config = chosen(program, kH200Multiprocessors, tuning);
  EXPECT_EQ(config.tile_m, 256);
  EXPECT_EQ(config.tile_n, 128);
  EXPECT_EQ(config.cluster_n, 2);
  EXPECT_EQ(config.stages, 3);
  EXPECT_TRUE(config.dependent_launch);
  // A field left open is the model's: the tile alone pinned, the cluster still chosen.
  KernelTuning tile_only;
  tile_only.tile_n = 128;
  const KernelConfig open = chosen(program, kH200Multiprocessors, tile_only);
  EXPECT_EQ(open.tile_n, 128);
  EXPECT_EQ(open.cluster_ctas(), 2);
}

// Ping-pong consumers take whole tiles: the unit is the tile, one consumer reads each stage,
// and describe() says so; a block-scaled program cannot take them (its scales are per half).
TEST(KernelConfig, PingPongUnitsAreWholeTiles) {
  const auto program = program_of(Flavor::kPlain, {.m = 4096, .n = 4096, .k = 4096});
  KernelTuning tuning;
  tuning.ping_pong = true;
  const KernelConfig config = chosen(program, kH200Multiprocessors, tuning);
  EXPECT_EQ(config.split, ConsumerSplit::kPingPong);
  EXPECT_EQ(config.unit_m(), config.tile_m);
  EXPECT_EQ(config.unit_n(), config.tile_n);
  EXPECT_EQ(config.tile_readers(), 1);
  EXPECT_LE(config.tile_m * config.tile_n / 128, kernels::max_accumulators(true, 1))
      << describe(config);
  EXPECT_NE(describe(config).find("ping-pong"), std::string::npos) << describe(config);
  KernelTuning split;
  split.ping_pong = false;
  EXPECT_NE(chosen(program, kH200Multiprocessors, split).split, ConsumerSplit::kPingPong);
  const auto scaled = program_of(Flavor::kBlockScaled, {.m = 4096, .n = 4096, .k = 4096});
  auto refused = choose_kernel_config(scaled, kH200Multiprocessors, tuning);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("ping-pong"), std::string::npos)
      << refused.status().message();
}

// Staging buffers: 2 by default where the consumers share a tile (ping-pong: above); a tuned
// count takes its 8 KB per buffer from the ring (128x256 with 4: 3 stages, not 4), and a
// count past 1..8 is refused by name.
TEST(KernelConfig, StagingBuffersComeOutOfTheRing) {
  const auto program = program_of(Flavor::kPlain, {.m = 8192, .n = 8192, .k = 1024});
  const KernelTuning tile = test::pinned_tuning(128, 256, false, 2, 1);
  const KernelConfig two = chosen(program, kH200Multiprocessors, tile);
  EXPECT_EQ(two.staging_buffers, 2);
  EXPECT_EQ(two.stages, 4);
  EXPECT_EQ(store_staging_bytes(program, two), 2 * kernels::kStagedBufferBytes);
  KernelTuning four = tile;
  four.staging_buffers = 4;  // a 64x256 unit's sub-tiles: no wait inside a unit
  const KernelConfig deep = chosen(program, kH200Multiprocessors, four);
  EXPECT_EQ(deep.staging_buffers, 4);
  EXPECT_EQ(deep.stages, 3);
  EXPECT_EQ(store_staging_bytes(program, deep), 4 * kernels::kStagedBufferBytes);
  EXPECT_NE(describe(deep).find("4 buffer(s) each"), std::string::npos) << describe(deep);
  for (const int bad : {0, -1, 9, 1 << 30}) {
    KernelTuning t = tile;
    t.staging_buffers = bad;
    auto refused = choose_kernel_config(program, kH200Multiprocessors, t);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find(fmt::format("{} staging buffers", bad)),
              std::string::npos)
        << refused.status().message();
    EXPECT_NE(refused.status().message().find("legal: 1 to 8"), std::string::npos);
  }
  // Eight buffers of 8 KB per consumer leave room for the least ring, two 48 KB stages.
  KernelTuning eight = tile;
  eight.staging_buffers = 8;
  EXPECT_EQ(chosen(program, kH200Multiprocessors, eight).stages, 2);
}

// Borrowed staging: as many buffers as a shared tile's unit has sub-tiles beyond its own two,
// at most half a stage each consumer; none for ping-pong, several staged outputs, block
// scaling, or a unit its own buffers already cover.
TEST(KernelConfig, StagingIsBorrowedFromTheLastStageWhereTheUnitLacksBuffers) {
  const auto program = program_of(Flavor::kPlain, {.m = 8192, .n = 8192, .k = 1024});
  const auto with = [&](const fusion::FusionProgram& p, KernelTuning t) {
    return chosen(p, kH200Multiprocessors, t);
  };
  // 64x256 bf16 units: 4 sub-tiles of 64 x 64, two own buffers; a 48 KB stage holds 3 a consumer.
  const KernelConfig wide = with(program, test::pinned_tuning(128, 256, false, 2, 1));
  EXPECT_EQ(wide.borrowed_buffers, 2);
  EXPECT_EQ(wide.stages, 4);  // borrowing takes no shared memory of its own
  EXPECT_NE(describe(wide).find("2 buffer(s) each + 2 borrowed from the ring"), std::string::npos)
      << describe(wide);
  EXPECT_EQ(with(program, test::pinned_tuning(256, 128, false, 2, 1)).borrowed_buffers, 2);
  EXPECT_EQ(with(program, test::pinned_tuning(128, 192, false, 2, 1)).borrowed_buffers, 1);
  EXPECT_EQ(with(program, test::pinned_tuning(128, 128, false, 2, 1)).borrowed_buffers, 0);
  KernelTuning pp;
  pp.ping_pong = true;
  EXPECT_EQ(with(program, pp).borrowed_buffers, 0);
  KernelTuning four = test::pinned_tuning(128, 256, false, 2, 1);
  four.staging_buffers = 4;
  EXPECT_EQ(with(program, four).borrowed_buffers, 0);
  KernelTuning three = four;
  three.staging_buffers = 3;
  EXPECT_EQ(with(program, three).borrowed_buffers, 1);
  const auto outputs = program_of(Flavor::kMultiOutput, {.m = 8192, .n = 8192, .k = 1024});
  ASSERT_GT(tma_store_outputs(outputs).size(), 1u);
  EXPECT_EQ(with(outputs, {}).borrowed_buffers, 0);
  const auto scaled = program_of(Flavor::kBlockScaled, {.m = 4096, .n = 4096, .k = 4096});
  EXPECT_EQ(with(scaled, {}).borrowed_buffers, 0);
  // The count is the config's own: a config built by hand borrows what the function says.
  KernelConfig hand = wide;
  hand.borrowed_buffers = 0;
  EXPECT_EQ(borrowed_staging_buffers(program, hand), 2);
}

// The borrowed buffers take a unit's first sub-tiles, so the stage goes back while the last
// ones (own buffers) are still being read; KernelTuning turns borrowing off, and refuses it
// where the kernel cannot borrow.
TEST(KernelConfig, BorrowedStagingTakesTheFirstSubTilesAndCanBeTurnedOff) {
  const auto program = program_of(Flavor::kPlain, {.m = 8192, .n = 8192, .k = 1024});
  const auto with = [&](KernelTuning t) { return chosen(program, kH200Multiprocessors, t); };
  const KernelTuning wide_tuning = test::pinned_tuning(128, 256, false, 2, 1);
  EXPECT_EQ(stores_after_borrowed(program, with(wide_tuning)), 2);  // 4 sub-tiles, 2 borrowed
  EXPECT_EQ(stores_after_borrowed(program, with(test::pinned_tuning(128, 192, false, 2, 1))),
            2);  // 3 sub-tiles, 1 borrowed
  // Sub-tiles past the buffers wrap around: the last of 8 lands in borrowed buffer 2 of 5.
  static_assert(stores_after_borrowed(8, 2, 3) == 0);
  static_assert(stores_after_borrowed(6, 2, 1) == 2);  // 0 and 3 borrowed
  static_assert(stores_after_borrowed(4, 2, 0) == 0);
  KernelTuning off = wide_tuning;
  off.borrow_staging = false;
  const KernelConfig unborrowed = with(off);
  EXPECT_EQ(unborrowed.borrowed_buffers, 0);
  EXPECT_EQ(unborrowed.stages, 4);
  EXPECT_EQ(stores_after_borrowed(program, unborrowed), 0);
  EXPECT_EQ(describe(unborrowed).find("borrowed"), std::string::npos) << describe(unborrowed);
  KernelTuning on = wide_tuning;
  on.borrow_staging = true;
  EXPECT_EQ(with(on).borrowed_buffers, 2);
  KernelTuning pp;
  pp.ping_pong = true;
  pp.borrow_staging = true;
  auto refused = choose_kernel_config(program, kH200Multiprocessors, pp);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("borrow_staging is true, but staging is borrowed "
                                            "only where both consumers share each tile"),
            std::string::npos)
      << refused.status().message();
}

TEST(KernelConfig, RefusesATuningTheKernelCannotTake) {
  const auto program = program_of(Flavor::kGatedMlp, {.m = 4096, .n = 4096, .k = 4096});
  KernelTuning tuning;
  tuning.tile_m = 128;
  tuning.tile_n = 256;  // two GEMMs of 64x256 units: 256 accumulators
  auto config = choose_kernel_config(program, kH200Multiprocessors, tuning);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find("kernel_tuning"), std::string::npos);
  EXPECT_NE(config.status().message().find("2 GEMM(s) x 1 fragment(s) x 128 accumulators"),
            std::string::npos)
      << config.status().message();
  EXPECT_NE(config.status().message().find("legal: at most 128"), std::string::npos);
}

// A tuning the kernel's static checks or the driver's TMA encoding would fail is refused at
// build by name: a 192-row tile (the kernel takes 64, 128 or 256 rows; NVRTC failed on its
// static_assert), and a 512-column split-N tile whose CTA would load B's 512 rows in one TMA
// box (at most 256: every execute failed in cuTensorMapEncodeTiled) unless a 2x1 cluster
// shares them, 256 rows each.
TEST(KernelConfig, RefusesTilesTheKernelOrItsTmaBoxesCannotTake) {
  const auto program = program_of(Flavor::kPlain, {.m = 1024, .n = 1024, .k = 512});
  struct Refused {
    KernelTuning tuning;
    std::string seen;
  };
  std::vector<Refused> refused(4);
  refused[0].tuning.tile_m = 192;
  refused[0].tuning.tile_n = 64;
  refused[0].tuning.ping_pong = true;
  refused[0].seen = "tile_m 64, 128 or 256";
  refused[1].tuning.tile_m = 192;
  refused[1].tuning.tile_n = 128;
  refused[1].tuning.split_n = true;
  refused[1].seen = "tile_m 64, 128 or 256";
  for (const int n : {512, 320}) {
    Refused& r = refused[n == 512 ? 2 : 3];
    r.tuning.tile_m = 64;
    r.tuning.tile_n = n;
    r.tuning.split_n = true;
    r.tuning.cluster_m = 1;
    r.tuning.cluster_n = 1;
    r.seen = fmt::format("each CTA loads {} rows of B 'B' in one TMA box; legal: at most 256", n);
  }
  for (const Refused& r : refused) {
    auto config = choose_kernel_config(program, kH200Multiprocessors, r.tuning);
    ASSERT_FALSE(config) << describe(config.value());
    EXPECT_EQ(config.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(config.status().message().find("kernel_tuning"), std::string::npos);
    EXPECT_NE(config.status().message().find(r.seen), std::string::npos)
        << config.status().message();
  }
  KernelTuning shared = refused[2].tuning;
  shared.cluster_m = 2;  // each CTA of the pair loads 256 of B's rows
  const KernelConfig c = chosen(program, kH200Multiprocessors, shared);
  EXPECT_EQ(c.tile_n, 512);
  EXPECT_EQ(c.cluster_m, 2);
}

// Hostile tunings (negative, zero, huge) are refused by name, never taken or overflowed; a
// hostile multiprocessor count plans as if none (negative) or very many.
TEST(KernelConfig, RefusesHostileTuningValues) {
  const auto program = program_of(Flavor::kPlain, {.m = 4096, .n = 4096, .k = 4096});
  std::vector<KernelTuning> tunings(7);
  tunings[0].tile_m = -128;
  tunings[1].tile_n = 1 << 30;
  tunings[2].tile_m = 0;
  tunings[3].stages = 0;
  tunings[4].stages = -5;
  tunings[5].cluster_m = 0;
  tunings[6].cluster_n = 3;
  for (const KernelTuning& tuning : tunings) {
    auto config = choose_kernel_config(program, kH200Multiprocessors, tuning);
    ASSERT_FALSE(config);
    EXPECT_EQ(config.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(config.status().message().find("kernel_tuning"), std::string::npos)
        << config.status().message();
    EXPECT_NE(config.status().message().find("legal"), std::string::npos)
        << config.status().message();
  }
  EXPECT_EQ(chosen(program, -7).sm_count, 0);
  const KernelConfig many = chosen(program, 1 << 30);  // one wave of anything: the least tile
  EXPECT_EQ(many.sm_count, 1 << 30);
  EXPECT_FALSE(config_violation(program, many).has_value());
}

// The raster band minimises the panels the resident clusters read: about
// sqrt(clusters x height_n / height_m) cluster-tile rows, within [1, rows].
TEST(KernelConfig, RasterGroupBalancesThePanels) {
  KernelConfig c;
  c.tile_m = 128;
  c.tile_n = 256;
  c.cluster_m = 2;
  // 66 clusters of 256x256 cluster tiles: sqrt(66) ~ 8 rows per band.
  EXPECT_EQ(raster_group(c, {1, 8192, 8192, 8192}, 66), 8);
  // Only 2 cluster-tile rows: the band is all of them.
  EXPECT_EQ(raster_group(c, {1, 512, 8192, 8192}, 66), 2);
  EXPECT_EQ(raster_group(c, {1, 1, 1, 1}, 0), 1);
  c.cluster_m = 1;
  c.tile_m = 256;
  c.tile_n = 128;
  // Taller tiles, shorter bands: sqrt(132 x 128 / 256) ~ 8.
  EXPECT_EQ(raster_group(c, {1, 8192, 8192, 8192}, 132), 8);
}

// A call's schedule divisors are the kernel's schedule's, for its cluster shape; where the
// kernel must take the division path (a batch, no tiles, 2^31 tiles or more) they say so.
TEST(KernelConfig, ScheduleDivisorsAreTheKernelSchedules) {
  KernelConfig c;
  c.tile_m = 128;
  c.tile_n = 256;
  const auto same = [](const kernels::ScheduleDivisors& a, const kernels::ScheduleDivisors& b) {
    EXPECT_EQ(a.fast, b.fast);
    for (const auto& [x, y] :
         {std::pair{a.band_tiles, b.band_tiles}, std::pair{a.band_rows, b.band_rows},
          std::pair{a.last_band_rows, b.last_band_rows}}) {
      EXPECT_EQ(x.divisor, y.divisor);
      EXPECT_EQ(x.multiplier, y.multiplier);
      EXPECT_EQ(x.shift, y.shift);
    }
  };
  for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
    c.cluster_m = cm;
    c.cluster_n = cn;
    const kernels::ScheduleDivisors d = schedule_divisors(c, {1, 1000, 3000, 64}, 3);
    EXPECT_EQ(d.fast, 1);
    if (cm == 2) same(d, kernels::TileScheduler<2, 1>(1, 1000, 3000, 128, 256, 3, 1).divisors());
    if (cn == 2) same(d, kernels::TileScheduler<1, 2>(1, 1000, 3000, 128, 256, 3, 1).divisors());
    if (cm * cn == 1) {
      same(d, kernels::TileScheduler<1, 1>(1, 1000, 3000, 128, 256, 3, 1).divisors());
    }
  }
  EXPECT_EQ(schedule_divisors(c, {2, 1000, 3000, 64}, 3).fast, 0);
  EXPECT_EQ(schedule_divisors(c, {1, 0, 3000, 64}, 3).fast, 0);
  EXPECT_EQ(schedule_divisors(c, {1, std::int64_t{1} << 40, std::int64_t{1} << 40, 64}, 3).fast, 0);
}

}  // namespace
}  // namespace fusedgemm::recipe
