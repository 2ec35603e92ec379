// plan_epilogue(): the kernel parameter of every store, how each tap meets a tile, the
// scratch the CTA-level steps need, and a refusal for what the generator cannot produce.
#include "codegen/epilogue_plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "codegen/epilogue.h"
#include "codegen/epilogue_cases.h"

using namespace fusedgemm;

namespace {

fusedgemm_test::EpilogueCase example(const std::string& file) {
  auto c = fusedgemm_test::epilogue_case(std::filesystem::path(FUSEDGEMM_EXAMPLES_DIR) / file);
  EXPECT_TRUE(c.has_value()) << file << " does not reach the epilogue generator";
  return std::move(*c);
}

codegen::EpiloguePlan plan_of(const std::string& file) {
  auto c = example(file);
  auto plan = codegen::plan_epilogue(*c.program, c.recipe);
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  return plan.is_ok() ? plan.value() : codegen::EpiloguePlan{};
}

// taps.json: row_sum and row_mean reduce N, col_amax and col_norm2 reduce M, max both;
// parameters follow the argument plan (A, B, bias, Y, then the taps).
TEST(PlanEpilogue, TapShapesFollowTheReducedAxes) {
  const auto plan = plan_of("taps.json");
  ASSERT_EQ(plan.taps.size(), 5u);
  const codegen::TapShape want[] = {codegen::TapShape::kRows, codegen::TapShape::kRows,
                                    codegen::TapShape::kCols, codegen::TapShape::kCols,
                                    codegen::TapShape::kTile};
  for (int t = 0; t < 5; ++t) {
    EXPECT_EQ(plan.taps[t].shape, want[t]) << "tap " << t;
    EXPECT_EQ(plan.taps[t].param, 4 + t) << "tap " << t;
  }
  EXPECT_EQ(plan.aux_param, std::vector<int>{2});
  EXPECT_EQ(plan.output_param, std::vector<int>{3});
  EXPECT_TRUE(plan.column_taps);
}

TEST(PlanEpilogue, ScratchBytesFollowTheTaps) {
  // Per consumer warpgroup: staging (4 warps x the unit's columns), then the staged
  // partials: 2 row taps x the unit's rows, 2 column taps x its columns, one tile tap (4
  // floats), 4 bytes each.
  const auto taps = example("taps.json");
  const unsigned m = static_cast<unsigned>(taps.recipe.config.unit_m());
  const unsigned n = static_cast<unsigned>(taps.recipe.config.unit_n());
  EXPECT_EQ(plan_of("taps.json").scratch_bytes, (4 * n + 2 * m + 2 * n + 4) * 4);
  // Two GEMMs; a row, a tile and a column tap.
  const auto taps_only = example("taps_only.json");
  const unsigned m2 = static_cast<unsigned>(taps_only.recipe.config.unit_m());
  const unsigned n2 = static_cast<unsigned>(taps_only.recipe.config.unit_n());
  EXPECT_EQ(plan_of("taps_only.json").scratch_bytes, (4 * n2 + m2 + 4 + n2) * 4);
  // One tile tap: 4 warps' partials (and the verdict), then its staged partial.
  EXPECT_EQ(plan_of("batched.json").scratch_bytes, 32u);
  EXPECT_EQ(plan_of("plain.json").scratch_bytes, 0u);
  EXPECT_EQ(plan_of("quantized_output.json").scratch_bytes, 0u);  // quad shuffles only
}

void expect_unavailable(const fusedgemm_test::EpilogueCase& c,
                        const std::vector<std::string>& says) {
  auto source = codegen::generate_epilogue(*c.program, c.recipe);
  ASSERT_FALSE(source.is_ok());
  EXPECT_EQ(source.status().code(), ErrorCode::kUnavailable);
  for (const auto& text : says) {
    EXPECT_NE(source.status().message().find(text), std::string::npos)
        << "'" << text << "' not in: " << source.status().message();
  }
}

TEST(PlanEpilogue, RefusesIntegerTap) {
  auto c = example("taps.json");
  c.program->buffers[c.program->taps[0].buffer].data_type = DataType::kInt32;
  expect_unavailable(c, {"epilogue_codegen", "role tap 'row_sum'", "int32", "legal: fp32"});
}

TEST(PlanEpilogue, RefusesQuantizedBlockWiderThanTheTile) {
  auto c = example("quantized_output.json");
  c.recipe.config.tile_n = 64;
  expect_unavailable(c, {"epilogue_codegen", "role output 'y'", "1x128", "64 columns"});
}

TEST(PlanEpilogue, RefusesQuantizedBlockOfSeveralRows) {
  auto c = example("quantized_output.json");
  c.program->quantized_outputs[0].block_rows = 2;
  expect_unavailable(c, {"role output 'y'", "2x128"});
}

TEST(PlanEpilogue, RefusesFp4Aux) {
  auto c = example("aux_bias.json");
  c.program->buffers[c.program->aux[0].buffer].data_type = DataType::kFp4E2M1;
  expect_unavailable(c, {"role aux 'row_scale'", "fp4"});
}

// Each consumer warpgroup's half of the tile is the epilogue's unit: whole 64-row groups.
TEST(PlanEpilogue, RefusesAUnitOfPartRowGroups) {
  auto c = example("plain.json");
  c.recipe.config.tile_m = 64;
  c.recipe.config.split = recipe::ConsumerSplit::kM;
  expect_unavailable(c, {"epilogue unit 32x", "rows a multiple of 64"});
}

TEST(PlanEpilogue, RecipeOfAnotherProgramIsInternal) {
  auto taps = example("taps.json");
  auto plain = example("plain.json");
  auto plan = codegen::plan_epilogue(*taps.program, plain.recipe);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().code(), ErrorCode::kInternal);
}

}  // namespace
