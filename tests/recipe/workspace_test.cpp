// workspace_layout(): the one statement of the workspace a call needs — one arrival counter
// per tap reduction group and one partial slot per CTA — and how it grows with the tiles.
#include "recipe/workspace.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "fusion/analyze.h"
#include "recipe/call_rules.h"
#include "recipe/call_view.h"
#include "recipe/kernel_config.h"
#include "recipe/print.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::recipe {
namespace {

using test::Flavor;
using test::FlavorShape;

// Every recipe here takes 128x128 CTA tiles whose consumers split the rows: epilogue units of
// 64x128, the tiles the workspace counts.
Recipe recipe_of(Flavor flavor, const FlavorShape& shape, int sm_count = 0, int tile_m = 128,
                 bool split_n = false) {
  auto fg = test::make_flavor_graph(flavor, shape);
  EXPECT_TRUE(fg) << fg.status().message();
  auto analysis = fusion::analyze(fg->graph);
  EXPECT_TRUE(analysis && !analysis->decline);
  auto program = std::make_shared<const fusion::FusionProgram>(analysis->program);
  KernelTuning tuning;
  tuning.tile_m = tile_m;
  tuning.tile_n = 128;
  tuning.split_n = split_n;
  tuning.ping_pong = false;
  auto config = choose_kernel_config(*program, sm_count, tuning);
  EXPECT_TRUE(config) << config.status().message();
  auto recipe = make_recipe(program, config.value());
  EXPECT_TRUE(recipe) << recipe.status().message();
  return std::move(recipe).value();
}

fusion::ProblemShape problem(std::int64_t batch, std::int64_t m, std::int64_t n,
                             std::int64_t k = 64) {
  fusion::ProblemShape p;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

TEST(Workspace, ZeroWithoutTaps) {
  for (Flavor flavor : {Flavor::kPlain, Flavor::kAuxRow, Flavor::kMultiOutput, Flavor::kGatedMlp}) {
    const Recipe r = recipe_of(flavor, {.batch = 2, .m = 128, .n = 128, .k = 64});
    const WorkspaceLayout layout = workspace_layout(r, problem(4, 1000, 1000));
    EXPECT_EQ(layout.tap_count, 0) << test::to_string(flavor);
    EXPECT_EQ(layout.bytes, 0u) << test::to_string(flavor);
    EXPECT_EQ(workspace_bytes(r, problem(4, 1000, 1000)), 0u);
  }
}

// A [b, M, 1] tap: one group per (batch, M unit), each of every N unit; a slot holds a
// unit's rows. Counters, then partials, each section 16-byte aligned.
TEST(Workspace, RowTapGroupsPerBatchAndMTile) {
  const Recipe r = recipe_of(Flavor::kTapsRow, {.batch = 3, .m = 200, .n = 300, .k = 64});
  ASSERT_EQ(r.config.unit_m(), 64);
  ASSERT_EQ(r.config.unit_n(), 128);
  const WorkspaceLayout layout = workspace_layout(r, problem(3, 200, 300));
  ASSERT_EQ(layout.tap_count, 8);  // every reduction mode
  const TapWorkspaceLayout& t = layout.taps[0];
  EXPECT_EQ(r.roles[t.role].kind, ParamKind::kTap);
  EXPECT_EQ(t.groups, 3u * 4u);  // batch x ceil(200 / 64)
  EXPECT_EQ(t.group_ctas, 3u);   // ceil(300 / 128)
  EXPECT_EQ(t.slot_floats, 64u);
  EXPECT_EQ(t.counters_bytes, 0u);
  EXPECT_EQ(t.partials_bytes, 96u);  // 12 words of 8 bytes
  EXPECT_EQ(layout.taps[1].counters_bytes, 96u + 12u * 3u * 64u * 4u);
  std::uint64_t total = 0;
  for (int i = 0; i < layout.tap_count; ++i) {
    EXPECT_EQ(layout.taps[i].counters_bytes % kWorkspaceAlignmentBytes, 0u);
    EXPECT_EQ(layout.taps[i].partials_bytes % kWorkspaceAlignmentBytes, 0u);
    total += 96u + 12u * 3u * 64u * 4u;
  }
  EXPECT_EQ(layout.bytes, total);
  EXPECT_EQ(layout.largest_group_ctas, 3u);
}

// [1, 1, 1] taps reduce the batch as well: one group of every unit of the problem. The
// [b, 1, 1] add tap keeps one group per batch.
TEST(Workspace, ScalarTapIsOneGroupOfEveryCta) {
  const Recipe r = recipe_of(Flavor::kTapsFull, {.batch = 2, .m = 256, .n = 384, .k = 64});
  const WorkspaceLayout layout = workspace_layout(r, problem(2, 256, 384));
  ASSERT_EQ(layout.tap_count, 9);
  for (int i = 0; i < layout.tap_count; ++i) {
    const auto& t = layout.taps[i];
    const bool per_batch = r.roles[t.role].name == "T_batch_add";
    EXPECT_EQ(t.groups, per_batch ? 2u : 1u) << r.roles[t.role].name;
    // ceil(256 / 64) x ceil(384 / 128) units per batch.
    EXPECT_EQ(t.group_ctas, per_batch ? 4u * 3u : 2u * 4u * 3u) << r.roles[t.role].name;
    EXPECT_EQ(t.slot_floats, 1u);
  }
  EXPECT_EQ(layout.largest_group_ctas, 24u);
}

TEST(Workspace, ColumnTapSlotsHoldAUnitsColumns) {
  const Recipe r = recipe_of(Flavor::kTapsColumn, {.batch = 1, .m = 300, .n = 100, .k = 64});
  const WorkspaceLayout layout = workspace_layout(r, problem(1, 300, 100));
  ASSERT_GT(layout.tap_count, 0);
  EXPECT_EQ(layout.taps[0].groups, 1u);      // ceil(100 / 128)
  EXPECT_EQ(layout.taps[0].group_ctas, 5u);  // ceil(300 / 64)
  EXPECT_EQ(layout.taps[0].slot_floats, static_cast<std::uint64_t>(r.config.unit_n()));
}

// More tiles, more bytes; the same tiles, the same bytes.
TEST(Workspace, GrowsWithTheTiles) {
  for (Flavor flavor :
       {Flavor::kTapsRow, Flavor::kTapsColumn, Flavor::kTapsFull, Flavor::kTapsOnlyMultiGemm}) {
    SCOPED_TRACE(test::to_string(flavor));
    const Recipe r = recipe_of(flavor, {.batch = 1, .m = 128, .n = 128, .k = 64});
    const std::uint64_t one = workspace_bytes(r, problem(1, 128, 128));
    EXPECT_GT(one, 0u);
    EXPECT_EQ(workspace_bytes(r, problem(1, 100, 120)), one);  // still two units
    // Sections are 16-byte aligned: a scalar tap's 4-byte slots show past 4 CTAs.
    EXPECT_GT(workspace_bytes(r, problem(1, 1100, 128)), one);
    EXPECT_GT(workspace_bytes(r, problem(1, 128, 1100)), one);
    EXPECT_GT(workspace_bytes(r, problem(8, 128, 128)), one);
    EXPECT_GT(workspace_bytes(r, problem(3, 1000, 1000)), workspace_bytes(r, problem(3, 500, 500)));
  }
}

// The workspace rule takes a tap reduction group of up to kernels::kCounterMaxGroup units and
// refuses one more, naming the limit: a counter's 24-bit count must not carry a completed
// group's first add into the epoch (kernels/epoch_counter.cuh). taps_full's [1, 1, 1] taps group
// every 64x128 unit: 2^24 - 2 = (94 x 64) x (178481 x 128), 2^24 - 1 = (4095 x 64) x
// (4097 x 128). The rule reads the layout and the given bytes only, so no memory is needed.
TEST(Workspace, TapGroupsUpToTheCounterLimit) {
  const Recipe r = recipe_of(Flavor::kTapsFull, {.batch = 1, .m = 128, .n = 128, .k = 64});
  constexpr auto kLimit = static_cast<std::uint64_t>(kernels::kCounterMaxGroup);
  EXPECT_EQ(kLimit, (std::uint64_t{1} << 24) - 2);
  alignas(16) static const std::uint8_t base[16] = {};
  for (const auto& [m, n, legal] :
       {std::tuple<std::int64_t, std::int64_t, bool>{94 * 64, 178481 * 128, true},
        {4095 * 64, 4097 * 128, false}}) {
    CallLayout layout;
    layout.problem = problem(1, m, n);
    layout.workspace = workspace_layout(r, layout.problem);
    EXPECT_EQ(layout.workspace.largest_group_ctas, kLimit + (legal ? 0 : 1));
    CallView view;
    view.layout = &layout;
    view.workspace = base;  // aligned; its bytes are never read
    view.workspace_bytes = layout.workspace.required_bytes;
    const int violation = call_rules::workspace_violation(r, view);
    EXPECT_EQ(violation, legal ? -1 : 0) << m << " x " << n;
    if (!legal) {
      const std::string why = call_rules::workspace_explain(r, view, violation);
      EXPECT_NE(why.find(fmt::format("at most {} epilogue units", kLimit)), std::string::npos)
          << why;
    }
  }
}

}  // namespace
}  // namespace fusedgemm::recipe

namespace fusedgemm::recipe {
namespace {

// Split K on a device of 132 SMs: a call of few tiles splits each tile's K steps, and the
// workspace gains, after the taps' required part, a counter per epilogue unit and `splits`
// slots of its accumulators (every GEMM's) — an optional part: the workspace rule asks for
// the required part only, and a workspace short of the whole runs unsplit.
TEST(Workspace, SplitKPartialsFollowTheTapsAndAreOptional) {
  const Recipe r = recipe_of(Flavor::kTapsRow, {.batch = 1, .m = 128, .n = 128, .k = 64}, 132);
  ASSERT_EQ(r.config.unit_m(), 64);
  ASSERT_EQ(r.config.unit_n(), 128);
  // 20 x 1024: 8 CTA tiles of 128x128 -> min(132 / 8, 2048 / 64 / 4, 8) = 8 splits.
  const WorkspaceLayout split = workspace_layout(r, problem(1, 20, 1024, 2048));
  const WorkspaceLayout unsplit = workspace_layout(r, problem(1, 20, 1024, 64));
  EXPECT_EQ(split.split.splits, 8);
  EXPECT_EQ(unsplit.split.splits, 1);
  EXPECT_EQ(unsplit.bytes, unsplit.required_bytes);
  EXPECT_EQ(split.required_bytes, unsplit.required_bytes);  // the taps' part is the same
  // A unit per consumer of each split tile: 8 tiles x 2 (the second's rows, past M = 20,
  // are never run; its slots stay unused).
  const std::uint64_t units = 8 * 2;
  EXPECT_EQ(split.split.counters_bytes, split.required_bytes);
  EXPECT_EQ(split.split.partials_bytes, split.required_bytes + units * 8);
  EXPECT_EQ(split.bytes, split.split.partials_bytes + units * 8 * 64 * 128 * 4);
  EXPECT_EQ(split.split.partials_bytes % kWorkspaceAlignmentBytes, 0u);
  // Split only with the whole workspace, aligned.
  alignas(16) static std::uint8_t memory[32];
  EXPECT_TRUE(splits_k(split, memory, split.bytes));
  EXPECT_FALSE(splits_k(split, memory, split.bytes - 1));
  EXPECT_FALSE(splits_k(split, memory + 8, split.bytes));
  EXPECT_FALSE(splits_k(split, nullptr, split.bytes));
  EXPECT_FALSE(splits_k(unsplit, memory, unsplit.bytes));
  EXPECT_EQ(used_workspace_bytes(split, memory, split.bytes), split.bytes);
  EXPECT_EQ(used_workspace_bytes(split, memory, split.required_bytes), split.required_bytes);
  // A gated MLP's slots hold both accumulators (64x64 units: 2 x 32 per thread; 64x128
  // units: 2 x 64).
  const Recipe gated = recipe_of(Flavor::kGatedMlp, {.batch = 1, .m = 64, .n = 128, .k = 64}, 132,
                                 64, /*split_n=*/true);
  ASSERT_EQ(gated.config.unit_n(), 64);
  const WorkspaceLayout g = workspace_layout(gated, problem(1, 20, 1024, 2048));
  ASSERT_EQ(g.split.splits, 8);
  EXPECT_EQ(g.required_bytes, 0u);
  EXPECT_EQ(g.bytes, g.split.partials_bytes + 16 * 8 * 2 * 64 * 64 * 4);  // 16 units
  const Recipe gated_wide =
      recipe_of(Flavor::kGatedMlp, {.batch = 1, .m = 128, .n = 128, .k = 64}, 132);
  ASSERT_EQ(gated_wide.config.unit_n(), 128);
  ASSERT_EQ(gated_wide.config.cluster_ctas(), 1);
  const WorkspaceLayout w = workspace_layout(gated_wide, problem(1, 20, 1024, 2048));
  ASSERT_EQ(w.split.splits, 8);
  EXPECT_EQ(w.bytes, w.split.partials_bytes + 16 * 8 * 2 * 64 * 128 * 4);
}

// Plan::describe() (recipe::to_string) says when the declared problem splits K, and which
// part of its workspace is required.
TEST(Workspace, TheRecipeSaysWhenTheDeclaredProblemSplits) {
  const Recipe split =
      recipe_of(Flavor::kTapsRow, {.batch = 1, .m = 20, .n = 1024, .k = 2048}, 132);
  const WorkspaceLayout layout = workspace_layout(split, split.program->problem);
  ASSERT_GT(layout.split.splits, 1);
  EXPECT_NE(
      to_string(split).find(fmt::format("workspace: {} bytes for the declared problem "
                                        "(grows with the call's tiles); K split {} ways "
                                        "there in every tile, {} bytes of it required",
                                        layout.bytes, layout.split.splits, layout.required_bytes)),
      std::string::npos)
      << to_string(split);
  // 128x128 tiles in 2-CTA clusters at 4096 x 8704: 16 waves of 66 and 32 cluster tiles.
  const Recipe tail = recipe_of(Flavor::kPlain, {.batch = 1, .m = 4096, .n = 8704, .k = 4096}, 132);
  EXPECT_NE(to_string(tail).find("K split 2 ways there in the last wave's 32 cluster tiles"),
            std::string::npos)
      << to_string(tail);
  const Recipe host = recipe_of(Flavor::kTapsRow, {.batch = 1, .m = 20, .n = 1024, .k = 2048});
  EXPECT_EQ(to_string(host).find("K split"), std::string::npos) << to_string(host);
}

// The split: the last wave's tiles — every tile, where they fill less than one wave —
// split into units that fit that wave's clusters, each at least 4 K steps, at most 8 (one
// wave: as many as fit; after two or more whole waves: as many as the model finds
// fastest); none on the host device, after one whole wave, where the last wave is over half
// full, or where K is short.
TEST(Workspace, KSplitFillsTheLastWave) {
  const Recipe r = recipe_of(Flavor::kPlain, {.batch = 1, .m = 128, .n = 128, .k = 64}, 132);
  ASSERT_EQ(r.config.cluster_ctas(), 1);
  ASSERT_EQ(r.config.tile_n, 128);
  const auto& program = *r.program;
  const auto split = [&](const fusion::ProblemShape& p, const KernelConfig& c) {
    const KSplit s = k_split(program, c, p);
    return std::make_tuple(s.splits, s.first, s.tiles);
  };
  using T = std::tuple<int, std::int64_t, std::int64_t>;
  const KernelConfig& c = r.config;
  EXPECT_EQ(split(problem(1, 20, 1024, 2048), c), T(8, 0, 8));       // 8 tiles, one wave
  EXPECT_EQ(split(problem(1, 20, 4096, 4096), c), T(4, 0, 32));      // 32 tiles
  EXPECT_EQ(split(problem(3, 20, 4096, 4096), c), T(1, 0, 0));       // 96 of 132
  EXPECT_EQ(split(problem(1, 20, 8448, 4096), c), T(2, 0, 66));      // 66 of 132
  EXPECT_EQ(split(problem(1, 20, 132 * 128, 4096), c), T(1, 0, 0));  // one whole wave
  EXPECT_EQ(split(problem(1, 20, 1024, 512), c), T(2, 0, 8));        // 8 steps
  EXPECT_EQ(split(problem(1, 20, 1024, 448), c), T(1, 0, 0));        // 7 steps
  EXPECT_EQ(split(problem(1, 20, 1024, 0), c), T(1, 0, 0));          // K = 0
  EXPECT_EQ(split(problem(1, 1LL << 40, 1LL << 40, 4096), c), T(1, 0, 0));
  // Several waves: the last one's tiles split, the waves before run whole, as many ways as
  // the model finds fastest: 8 ways fit 10 tiles, but the last split's reads of 8 slots
  // cost more than the steps 4 ways leave; at 12 K steps the partials' round trip costs
  // more than any split saves.
  EXPECT_EQ(split(problem(1, 128, 142 * 128, 4096), c), T(1, 0, 0));     // one wave before
  EXPECT_EQ(split(problem(1, 128, 274 * 128, 4096), c), T(4, 264, 10));  // 10 left over
  EXPECT_EQ(split(problem(1, 256, 148 * 128, 4096), c), T(4, 264, 32));  // 296 tiles
  EXPECT_EQ(split(problem(1, 256, 148 * 128, 768), c), T(1, 0, 0));      // 12 steps
  EXPECT_EQ(split(problem(1, 256, 166 * 128, 4096), c), T(1, 0, 0));     // 68: over half
  EXPECT_EQ(split(problem(1, 256, 132 * 128, 4096), c), T(1, 0, 0));     // two whole waves
  // 2-CTA clusters split by the cluster tiles of the last wave over 66 clusters.
  KernelConfig pair = c;
  pair.cluster_m = 2;
  EXPECT_EQ(split(problem(1, 4096, 11008, 4096),
                  [&] {
                    KernelConfig w = pair;
                    w.tile_n = 256;
                    return w;
                  }()),
            T(2, 660, 28));  // 688 cluster tiles of 128x256 2x1: 10 waves and 28
  KernelConfig host = c;
  host.sm_count = 0;
  EXPECT_EQ(split(problem(1, 20, 1024, 2048), host), T(1, 0, 0));
  KernelConfig wide = c;  // 128 accumulators in one row group split too
  wide.tile_n = 256;
  EXPECT_EQ(split(problem(1, 20, 1024, 2048), wide), T(8, 0, 4));
  KernelConfig tall = c;  // 128 accumulators in two row groups: no split path
  tall.tile_m = 256;
  EXPECT_EQ(split(problem(1, 20, 1024, 2048), tall), T(1, 0, 0));
}

}  // namespace
}  // namespace fusedgemm::recipe
