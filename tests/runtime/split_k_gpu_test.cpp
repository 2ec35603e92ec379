// Split K on the GPU (kernels/split_k.cuh): a call whose tiles would leave most of the
// device idle computes each tile as several work units over disjoint K steps that meet in
// the workspace. Every flavor at a decode-size M against the fp64 reference with poisoned,
// guarded outputs and garbage workspaces; the same bits on every run whichever split ends
// last; the same call without the split's workspace runs unsplit and right; pinned tile
// shapes and clusters. Suites named *Gpu* carry the ctest label `gpu` and skip without a
// device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fusedgemm/plan.h"
#include "recipe/kernel_config.h"
#include "recipe/workspace.h"
#include "runtime/plan_state.h"
#include "support/call_harness.h"
#include "support/cuda_graph.h"
#include "support/device_call.h"
#include "support/flavor_graphs.h"
#include "support/tuning.h"

namespace fusedgemm::test {
namespace {

bool has_taps(Flavor flavor) {
  return flavor == Flavor::kTapsRow || flavor == Flavor::kTapsColumn ||
         flavor == Flavor::kTapsFull || flavor == Flavor::kTapsOnlyMultiGemm;
}

class SplitKGpu : public OnGpu<> {
 protected:
  // Builds `fg`, then runs one call three times — with Plan::workspace_bytes of garbage, again
  // with fresh garbage, again on the same workspace — each on poisoned outputs, checking the
  // reference (the first run only where `every_reference` is false: a large call's fp64
  // reference takes seconds), the guards and that every run wrote the same bits; then, without
  // taps, with no workspace (unsplit). Returns the call's split layout (splits 0 when the
  // kernel refuses the tuning).
  recipe::SplitWorkspaceLayout run(const std::string& label, Flavor flavor,
                                   const FlavorShape& shape, const KernelTuning& tuning,
                                   std::uint64_t seed, bool every_reference = true) {
    recipe::SplitWorkspaceLayout refused;
    refused.splits = 0;
    SCOPED_TRACE(label);
    auto fg = make_flavor_graph(flavor, shape);
    EXPECT_TRUE(fg) << fg.status().message();
    if (!fg) return refused;
    BuildOptions options{device_};
    options.tuning = tuning;
    options.engine = Engine::kFused;
    auto plan = build(fg->graph, options);
    if (!plan && plan.status().message().rfind("kernel_tuning", 0) == 0) return refused;
    EXPECT_TRUE(plan) << plan.status().message();
    if (!plan) return refused;
    SCOPED_TRACE(recipe::describe(runtime::PlanAccess::state(plan.value()).recipe.config));
    auto call = CallBuffers::make(fg->graph, seed);
    EXPECT_TRUE(call) << call.status().message();
    if (!call) return refused;
    DeviceCall device_call(device_, call.value());
    EXPECT_TRUE(device_call.upload());
    auto bound = plan->bind(device_call.pack());
    EXPECT_TRUE(bound) << bound.status().message();
    if (!bound) return refused;
    const recipe::WorkspaceLayout& layout =
        runtime::PlanAccess::call(bound.value()).layout.workspace;
    const std::uint64_t bytes = plan->workspace_bytes(bound.value()).value();
    EXPECT_EQ(bytes, layout.bytes);
    std::mt19937_64 garbage(seed);
    std::vector<std::vector<std::uint8_t>> first;
    for (int pass = 0; pass < 3; ++pass) {
      SCOPED_TRACE(fmt::format("pass {}", pass));
      call->prepare();
      EXPECT_TRUE(device_call.upload());
      auto ws = device_call.workspace(bytes, pass < 2 ? &garbage : nullptr);
      EXPECT_TRUE(ws) << ws.status().message();
      if (!ws) return refused;
      const Status s = plan->execute(bound.value(), ws.value(), nullptr);
      EXPECT_TRUE(s) << s.message();
      EXPECT_TRUE(device_call.download());
      if (pass == 0 || every_reference) {
        EXPECT_TRUE(call->matches_reference(fg->graph));
      }
      EXPECT_TRUE(call->outside_untouched());
      if (pass == 0) {
        first = written_bytes(call.value());
      } else {
        EXPECT_TRUE(written_bytes(call.value()) == first)
            << "a run of the same call wrote other bits";
      }
    }
    if (!has_taps(flavor) && every_reference) {
      SCOPED_TRACE("no workspace: unsplit");
      call->prepare();
      EXPECT_TRUE(device_call.upload());
      const Status s = plan->execute(bound.value(), Workspace{}, nullptr);
      EXPECT_TRUE(s) << s.message();
      EXPECT_TRUE(device_call.download());
      EXPECT_TRUE(call->matches_reference(fg->graph));
      EXPECT_TRUE(call->outside_untouched());
    }
    EXPECT_EQ(total_deferrals(plan.value()), 0u);
    return layout.split;
  }
};

// Every flavor at M = 20 (one partial 64-row group: the rows past M are neither stored nor
// read) and batch 1 or 3, on the tile the cost model picks.
TEST_F(SplitKGpu, EveryFlavorSplitsAtDecodeSizeM) {
  std::uint64_t seed = 900;
  int split = 0;
  for (const Flavor flavor : all_flavors()) {
    for (const std::int64_t batch : {1, 3}) {
      // Block-scaled fp8 steps 128 of K; the rest 64 (16-bit) or 128 (fp8 operands).
      const FlavorShape shape{.batch = batch, .m = 20, .n = 528, .k = 1280};
      const int splits =
          run(fmt::format("{} batch {}", to_string(flavor), batch), flavor, shape, {}, seed++)
              .splits;
      split += splits > 1;
    }
  }
  std::printf("  %d of %zu flavor x batch cases split K\n", split, 2 * all_flavors().size());
  EXPECT_GE(split, static_cast<int>(all_flavors().size()));
}

// Pinned tiles and clusters (row halves, column halves, multicast along M and N, ping-pong)
// with a ragged M, N and K, so a tile's units cover K steps of different counts (ping-pong:
// the two consumers take alternate splits of a tile).
TEST_F(SplitKGpu, PinnedShapesAndClustersSplit) {
  struct Shape {
    const char* name;
    int tile_m, tile_n;
    bool split_n, ping_pong;
  };
  constexpr Shape kShapes[] = {
      {"128x128", 128, 128, false, false}, {"64x128n", 64, 128, true, false},
      {"64x256n", 64, 256, true, false},   {"128x64", 128, 64, false, false},
      {"128x256", 128, 256, false, false}, {"64x256pp", 64, 256, false, true},
      {"64x128pp", 64, 128, false, true}};
  std::uint64_t seed = 950;
  for (const Shape& s : kShapes) {
    for (const auto& [cm, cn] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{1, 2}}) {
      const KernelTuning tuning =
          pinned_tuning(s.tile_m, s.tile_n, s.split_n, cm, cn, std::nullopt, s.ping_pong);
      const std::string label = fmt::format("plain {} cluster {}x{}", s.name, cm, cn);
      const int splits =
          run(label, Flavor::kPlain, {.batch = 2, .m = 70, .n = 300, .k = 1000}, tuning, seed++)
              .splits;
      EXPECT_TRUE(splits == 0 || splits > 1) << label;
    }
  }
}

// Calls of two or more waves of tiles and a last wave under half full: only that wave's
// tiles split (the tiles before it run whole), on the largest tiles (128x256 in 2-CTA
// clusters, ping-pong 64x256) and in the main flavors on 128x128 tiles (two GEMMs, taps,
// aux vectors, fp8, block scales, quantized and several outputs). Ragged M and N; K long
// enough that the model finds the split faster (a 128x128 split's partials cost about as
// much as 8 K steps); one fp64 reference per call (2-10 G multiply-adds each).
TEST_F(SplitKGpu, OnlyTheLastWaveSplitsAfterWholeWaves) {
  struct Case {
    const char* name;
    Flavor flavor;
    KernelTuning tuning;
    FlavorShape shape;
  };
  // On a 132-SM device: 270 tiles of 128x128, two waves and 6 tiles; 136 cluster tiles of
  // 128x256 2x1 on 66 clusters; 269 tiles of ping-pong 64x256.
  const FlavorShape square{.batch = 1, .m = 130, .n = 128 * 134 + 40, .k = 1040};
  FlavorShape square_fp8 = square;
  square_fp8.k = 2080;  // 17 K steps of 128
  square_fp8.operand_type = DataType::kFp8E4M3;
  FlavorShape square_block_scaled = square;
  square_block_scaled.k = 2080;
  const KernelTuning t128 = pinned_tuning(128, 128, false, 1, 1, std::nullopt, false);
  const std::vector<Case> cases = {
      {"plain 128x256 2x1",
       Flavor::kPlain,
       pinned_tuning(128, 256, false, 2, 1, std::nullopt, false),
       {.batch = 1, .m = 500, .n = 256 * 67 + 100, .k = 1104}},
      {"plain ping-pong 64x256",
       Flavor::kPlain,
       pinned_tuning(64, 256, false, 1, 1, std::nullopt, true),
       {.batch = 1, .m = 60, .n = 256 * 268 + 30, .k = 1040}},
      {"plain", Flavor::kPlain, t128, square},
      {"aux column", Flavor::kAuxColumn, t128, square},
      {"taps row", Flavor::kTapsRow, t128, square},
      {"gated MLP", Flavor::kGatedMlp, t128, square},
      {"multi output", Flavor::kMultiOutput, t128, square},
      {"quantized", Flavor::kQuantized, t128, square},
      {"epilogue, fp8 operands", Flavor::kEpilogue, t128, square_fp8},
      {"block scaled", Flavor::kBlockScaled, t128, square_block_scaled},
  };
  std::uint64_t seed = 1200;
  int tails = 0;
  for (const Case& c : cases) {
    const recipe::SplitWorkspaceLayout split =
        run(c.name, c.flavor, c.shape, c.tuning, seed++, /*every_reference=*/false);
    if (split.splits == 0) continue;  // a tuning this flavor's kernel refuses
    EXPECT_GT(split.splits, 1) << c.name;
    EXPECT_GT(split.first, 0) << c.name << ": every tile split, not the last wave's";
    tails += split.splits > 1 && split.first > 0;
  }
  std::printf("  %d of %zu calls split their last wave only\n", tails, cases.size());
  EXPECT_GE(tails, static_cast<int>(cases.size()) - 1);
}

// A captured split call replayed on the same workspace, untouched between replays: every
// replay launches the same epoch and finds the counters its predecessor completed, so each
// arrival starts the count afresh (kernels/epoch_counter.cuh). Every replay writes the bits
// of the direct execute, which matches the reference.
TEST_F(SplitKGpu, ReplaysOfACapturedSplitCallOnOneWorkspaceAreIdentical) {
  for (const Flavor flavor : {Flavor::kPlain, Flavor::kTapsRow}) {
    SCOPED_TRACE(std::string(to_string(flavor)));
    auto fg = make_flavor_graph(flavor, {.batch = 1, .m = 20, .n = 528, .k = 1280});
    ASSERT_TRUE(fg) << fg.status().message();
    auto plan = build(fg->graph, BuildOptions{device_});
    ASSERT_TRUE(plan) << plan.status().message();
    auto call = CallBuffers::make(fg->graph, 77);
    ASSERT_TRUE(call) << call.status().message();
    call->prepare();
    DeviceCall device_call(device_, call.value());
    ASSERT_TRUE(device_call.upload());
    auto bound = plan->bind(device_call.pack());
    ASSERT_TRUE(bound) << bound.status().message();
    ASSERT_GT(runtime::PlanAccess::call(bound.value()).layout.workspace.split.splits, 1);
    std::mt19937_64 garbage(78);
    auto ws = device_call.workspace(plan->workspace_bytes(bound.value()).value(), &garbage);
    ASSERT_TRUE(ws) << ws.status().message();
    auto stream = CudaGraphStream::create(*device_);
    ASSERT_TRUE(stream) << stream.status().message();
    void* s = stream.value()->stream();

    ASSERT_TRUE(plan->execute(bound.value(), ws.value(), s));
    ASSERT_TRUE(stream.value()->synchronize());
    ASSERT_TRUE(device_call.download());
    EXPECT_TRUE(call->matches_reference(fg->graph));
    EXPECT_TRUE(call->outside_untouched());
    const auto direct = written_bytes(call.value());

    ASSERT_TRUE(stream.value()->begin_capture());
    const Status captured = plan->execute(bound.value(), ws.value(), s);
    auto nodes = stream.value()->end_capture();
    ASSERT_TRUE(captured) << captured.message();
    ASSERT_TRUE(nodes) << nodes.status().message();
    for (int replay = 0; replay < 3; ++replay) {
      SCOPED_TRACE(replay);
      call->prepare();
      ASSERT_TRUE(device_call.upload());
      ASSERT_TRUE(stream.value()->replay());
      ASSERT_TRUE(device_call.download());
      EXPECT_TRUE(written_bytes(call.value()) == direct) << "replay " << replay;
    }
  }
}

}  // namespace
}  // namespace fusedgemm::test
