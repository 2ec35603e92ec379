// plan_epilogue(): the kernel parameter of every store, how each tap meets a tile, the
// scratch the CTA-level steps need, and a refusal for what the generator cannot produce.
#include "codegen/epilogue_plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/epilogue.h"
#include "codegen/epilogue_cases.h"
#include "recipe/kernel_config.h"
#include "recipe/limits.h"

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

// Bytes a plan's staged column vectors add after `taps` bytes of tap scratch (0 where none
// is staged): each bf16 bias of the unit's columns at the next 16-byte boundary.
unsigned staged_bias_bytes(const codegen::EpiloguePlan& plan, unsigned taps, unsigned unit_n) {
  for (const int offset : plan.aux_staged_offset) {
    if (offset >= 0) return (taps + 15) / 16 * 16 - taps + 2 * unit_n;
  }
  return 0;
}

TEST(PlanEpilogue, ScratchBytesFollowTheTaps) {
  // Per consumer warpgroup: staging (4 warps x the unit's columns), then the staged
  // partials: 2 row taps x the unit's rows, 2 column taps x its columns, one tile tap (4
  // floats), 4 bytes each; then the bias where it is staged.
  const auto taps = example("taps.json");
  const unsigned m = static_cast<unsigned>(taps.recipe.config.unit_m());
  const unsigned n = static_cast<unsigned>(taps.recipe.config.unit_n());
  const auto taps_plan = plan_of("taps.json");
  const unsigned taps_bytes = (4 * n + 2 * m + 2 * n + 4) * 4;
  EXPECT_EQ(taps_plan.scratch_bytes, taps_bytes + staged_bias_bytes(taps_plan, taps_bytes, n));
  // Two GEMMs; a row, a tile and a column tap.
  const auto taps_only = example("taps_only.json");
  const unsigned m2 = static_cast<unsigned>(taps_only.recipe.config.unit_m());
  const unsigned n2 = static_cast<unsigned>(taps_only.recipe.config.unit_n());
  EXPECT_EQ(plan_of("taps_only.json").scratch_bytes, (4 * n2 + m2 + 4 + n2) * 4);
  // One tile tap: 4 warps' partials (and the verdict), then its staged partial; the bias.
  const auto batched = example("batched.json");
  const auto batched_plan = plan_of("batched.json");
  EXPECT_EQ(batched_plan.scratch_bytes,
            32u + staged_bias_bytes(batched_plan, 32u,
                                    static_cast<unsigned>(batched.recipe.config.unit_n())));
  EXPECT_EQ(plan_of("plain.json").scratch_bytes, 0u);
  EXPECT_EQ(plan_of("quantized_output.json").scratch_bytes, 0u);  // quad shuffles only
}

// A column vector (aux_bias.json's and taps.json's bias) is staged after the taps' scratch
// exactly where the kernel still fits in shared memory with it; row, full and scalar aux
// never are. Over tiles, splits, stages and staging buffers, both outcomes occur.
TEST(PlanEpilogue, StagesColumnVectorsWhereSharedMemoryHasRoom) {
  int staged = 0;
  int unstaged = 0;
  for (const std::string file : {"aux_bias.json", "taps.json"}) {
    auto c = example(file);
    auto& config = c.recipe.config;
    for (const auto& [tile_m, tile_n, split] :
         {std::tuple{128, 256, recipe::ConsumerSplit::kM},
          std::tuple{128, 128, recipe::ConsumerSplit::kM},
          std::tuple{256, 128, recipe::ConsumerSplit::kM},
          std::tuple{64, 256, recipe::ConsumerSplit::kPingPong}}) {
      for (int stages = 2; stages <= 7; ++stages) {
        for (int buffers = 1; buffers <= 2; ++buffers) {
          config.tile_m = tile_m;
          config.tile_n = tile_n;
          config.split = split;
          config.stages = stages;
          config.staging_buffers = buffers;
          SCOPED_TRACE(fmt::format("{} tile {}x{} stages {} buffers {}", file, tile_m, tile_n,
                                   stages, buffers));
          auto plan = codegen::plan_epilogue(*c.program, c.recipe);
          ASSERT_TRUE(plan.is_ok()) << plan.status().message();
          // taps.json's taps (ScratchBytesFollowTheTaps) come first; aux_bias.json has none.
          const std::int64_t m = config.unit_m();
          const std::int64_t n = config.unit_n();
          const std::int64_t taps = file == "taps.json" ? (4 * n + 2 * m + 2 * n + 4) * 4 : 0;
          std::int64_t bytes = taps;
          ASSERT_EQ(plan.value().aux_staged_offset.size(), c.program->aux.size());
          for (std::size_t a = 0; a < c.program->aux.size(); ++a) {
            const auto& aux = c.program->aux[a];
            const int offset = plan.value().aux_staged_offset[a];
            if (aux.broadcast != fusion::Broadcast::kColumn) {
              EXPECT_EQ(offset, -1) << "aux " << a;
              continue;
            }
            const std::int64_t start = (bytes + 15) / 16 * 16;
            const std::int64_t end =
                start + recipe::bytes_of(c.program->buffers[aux.buffer].data_type, n);
            if (recipe::kernel_shared_bytes(*c.program, config, end) <= recipe::kMaxSharedBytes) {
              EXPECT_EQ(offset, start) << "aux " << a;
              bytes = end;
              ++staged;
            } else {
              EXPECT_EQ(offset, -1) << "aux " << a;
              ++unstaged;
            }
          }
          EXPECT_EQ(plan.value().scratch_bytes, bytes);
        }
      }
    }
  }
  EXPECT_GT(staged, 0);
  EXPECT_GT(unstaged, 0);
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
