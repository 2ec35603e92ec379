// workspace_layout(): the one statement of the workspace a call needs — one arrival counter
// per tap reduction group and one partial slot per CTA — and how it grows with the tiles.
#include "recipe/workspace.h"

#include <gtest/gtest.h>

#include <memory>

#include "fusion/analyze.h"
#include "recipe/kernel_config.h"
#include "support/flavor_graphs.h"

namespace fusedgemm::recipe {
namespace {

using test::Flavor;
using test::FlavorShape;

// Every recipe here takes 128x128 CTA tiles whose consumers split the rows: epilogue units of
// 64x128, the tiles the workspace counts.
Recipe recipe_of(Flavor flavor, const FlavorShape& shape) {
  auto fg = test::make_flavor_graph(flavor, shape);
  EXPECT_TRUE(fg) << fg.status().message();
  auto analysis = fusion::analyze(fg->graph);
  EXPECT_TRUE(analysis && !analysis->decline);
  auto program = std::make_shared<const fusion::FusionProgram>(analysis->program);
  KernelTuning tuning;
  tuning.tile_m = 128;
  tuning.tile_n = 128;
  tuning.split_n = false;
  tuning.ping_pong = false;
  auto config = choose_kernel_config(*program, 0, tuning);
  EXPECT_TRUE(config) << config.status().message();
  auto recipe = make_recipe(program, config.value());
  EXPECT_TRUE(recipe) << recipe.status().message();
  return std::move(recipe).value();
}

fusion::ProblemShape problem(std::int64_t batch, std::int64_t m, std::int64_t n) {
  fusion::ProblemShape p;
  p.batch = batch;
  p.m = m;
  p.n = n;
  p.k = 64;
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

}  // namespace
}  // namespace fusedgemm::recipe
