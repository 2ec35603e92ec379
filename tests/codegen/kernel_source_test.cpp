// generate_kernel_source(): the assembled translation unit is byte-stable (golden file), its
// TMA plans follow the operand majors, what the kernel cannot read is kUnavailable with the
// operand named, and — where this build has NVRTC — every supported flavor compiles for
// sm_90a with no spills, no stack frame and wgmma left pipelined.
#include "codegen/kernel_source.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "codegen/embedded_headers.h"
#include "example_files.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/graph_json.h"
#include "fusion/analyze.h"
#include "kernels/kernel_args.h"
#include "nvrtc_compile.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/support_gate.h"
#include "stand_in_epilogue.h"
#include "support/tuning.h"

namespace fusedgemm::codegen {
namespace {

using fusion::FusionProgram;
using fusion::Major;
using Dimv = std::vector<std::int64_t>;

constexpr int kMaxDynamicSharedBytes = 227 * 1024;

// One GEMM graph of the test table: A [ba, M, K] @ B [bb, K, N] (and a second B for the
// gated MLP, silu(A @ B0) * (A @ B1)), stored as fp32 D [b, M, N].
struct GemmCase {
  std::string name;
  std::int64_t m = 256, n = 256, k = 128;
  std::int64_t batch_a = 1, batch_b = 1;
  Major a_major = Major::kK;
  Major b_major = Major::kK;
  DataType a_type = DataType::kBFloat16;
  DataType b_type = DataType::kBFloat16;
  bool gated = false;
  // fp8 operands through block_scale_dequantize: fp32 scales per 1x128 of A, 128x128 of B.
  bool block_scaled = false;
  // Full aux inputs X0, X1, .. [1, M, N], N-major, added to the product.
  std::vector<DataType> full_aux{};
  // The kernel shape, where a case pins it; the cost model's choice for the H200 otherwise.
  KernelTuning tuning{};
};

// The H200's multiprocessors (the device the tests' expectations are read on).
constexpr int kH200Multiprocessors = 132;

using test::KernelShape;
using test::kKernelShapes;
using test::pinned_tuning;

Tensor input(Graph& g, const std::string& name, Dimv dims, DataType type, Dimv strides) {
  TensorAttributes attributes;
  attributes.set_name(name)
      .set_dim(std::move(dims))
      .set_data_type(type)
      .set_stride(std::move(strides));
  return g.tensor(attributes);
}

Dimv a_strides(const GemmCase& c) {
  return c.a_major == Major::kK ? Dimv{c.m * c.k, c.k, 1} : Dimv{c.m * c.k, 1, c.m};
}
Dimv b_strides(const GemmCase& c) {
  return c.b_major == Major::kK ? Dimv{c.k * c.n, 1, c.k} : Dimv{c.k * c.n, c.n, 1};
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// `x` itself, or dequant(x, scale) with dense fp32 scales per block_rows x 128 block.
Tensor scaled(Graph& g, const GemmCase& c, const Tensor& x, std::int64_t block_rows) {
  if (!c.block_scaled) return x;
  const auto& dims = x->dims();
  const Dimv scale_dims{dims[0], ceil_div(dims[1], block_rows), ceil_div(dims[2], 128)};
  auto scale = input(g, x->name() + "_scale", scale_dims, DataType::kFloat32,
                     {scale_dims[1] * scale_dims[2], scale_dims[2], 1});
  return g.block_scale_dequantize(x, scale,
                                  BlockScaleDequantizeAttributes()
                                      .set_name("dequant_" + x->name())
                                      .set_block_size(block_rows, 128));
}

Graph make_graph(const GemmCase& c) {
  Graph g;
  g.set_name(c.name);
  auto a = scaled(g, c, input(g, "A", {c.batch_a, c.m, c.k}, c.a_type, a_strides(c)), 1);
  auto b0 = scaled(g, c, input(g, "B0", {c.batch_b, c.k, c.n}, c.b_type, b_strides(c)), 128);
  Tensor d = g.matmul(a, b0, MatmulAttributes().set_name("gemm0"));
  if (c.gated) {
    auto b1 = scaled(g, c, input(g, "B1", {c.batch_b, c.k, c.n}, c.b_type, b_strides(c)), 128);
    auto up = g.matmul(a, b1, MatmulAttributes().set_name("gemm1"));
    auto act = g.pointwise(d, PointwiseAttributes().set_mode(PointwiseMode::kSilu));
    d = g.pointwise(act, up, PointwiseAttributes().set_mode(PointwiseMode::kMul));
  }
  for (std::size_t i = 0; i < c.full_aux.size(); ++i) {
    auto x = input(g, fmt::format("X{}", i), {1, c.m, c.n}, c.full_aux[i], {c.m * c.n, c.n, 1});
    d = g.pointwise(d, x, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
  }
  d->set_name("D").set_data_type(DataType::kFloat32).set_output(true);
  return g;
}

// Graph -> validate -> analyze -> gate -> config -> recipe, failing the test on any error.
std::optional<recipe::Recipe> recipe_of(Graph& g, const KernelTuning& tuning = {}) {
  if (Status s = g.validate(); !s) {
    ADD_FAILURE() << "validate: " << s.message();
    return std::nullopt;
  }
  auto analysis = fusion::analyze(g);
  if (!analysis || analysis->decline) {
    ADD_FAILURE() << "analyze: "
                  << (analysis ? analysis->decline->message : analysis.status().message());
    return std::nullopt;
  }
  if (auto decline = recipe::check_support(analysis->program)) {
    ADD_FAILURE() << "declined: " << decline->message;
    return std::nullopt;
  }
  auto program = std::make_shared<const FusionProgram>(std::move(analysis->program));
  auto config = recipe::choose_kernel_config(*program, kH200Multiprocessors, tuning);
  if (!config) {
    ADD_FAILURE() << "config: " << config.status().message();
    return std::nullopt;
  }
  auto recipe = recipe::make_recipe(program, config.value());
  if (!recipe) {
    ADD_FAILURE() << "recipe: " << recipe.status().message();
    return std::nullopt;
  }
  return std::move(recipe).value();
}

const std::vector<GemmCase>& compile_cases() {
  static const std::vector<GemmCase> kCases = {
      {.name = "bf16_kk"},
      {.name = "bf16_mk", .a_major = Major::kM},
      {.name = "bf16_kn", .b_major = Major::kN},
      {.name = "bf16_mn", .a_major = Major::kM, .b_major = Major::kN},
      {.name = "fp16_mn",
       .a_major = Major::kM,
       .b_major = Major::kN,
       .a_type = DataType::kFloat16,
       .b_type = DataType::kFloat16},
      {.name = "bf16_m48", .m = 48},
      {.name = "bf16_m64_mn", .m = 64, .a_major = Major::kM, .b_major = Major::kN},
      {.name = "batch_broadcast_b", .batch_a = 3, .batch_b = 1, .a_major = Major::kM},
      {.name = "gated_mlp", .gated = true},
      {.name = "gated_mlp_mn", .a_major = Major::kM, .b_major = Major::kN, .gated = true},
      {.name = "gated_mlp_m40", .m = 40, .gated = true},
      {.name = "gated_mlp_large", .m = 4096, .n = 4096, .k = 4096, .gated = true},
      {.name = "fp8_e4m3_e5m2", .a_type = DataType::kFp8E4M3, .b_type = DataType::kFp8E5M2},
      // Block-scaled fp8: acc and the K block's partial sum both live, so 64-row units.
      {.name = "block_scaled",
       .a_type = DataType::kFp8E4M3,
       .b_type = DataType::kFp8E4M3,
       .block_scaled = true},
      {.name = "block_scaled_ragged_batch3",
       .m = 200,
       .n = 144,
       .k = 272,
       .batch_a = 3,
       .batch_b = 3,
       .a_type = DataType::kFp8E4M3,
       .b_type = DataType::kFp8E4M3,
       .block_scaled = true},
      {.name = "block_scaled_e5m2_broadcast_b",
       .m = 1,
       .k = 384,
       .batch_a = 3,
       .a_type = DataType::kFp8E4M3,
       .b_type = DataType::kFp8E5M2,
       .block_scaled = true},
      {.name = "block_scaled_gated",
       .a_type = DataType::kFp8E4M3,
       .b_type = DataType::kFp8E4M3,
       .gated = true,
       .block_scaled = true},
      {.name = "block_scaled_large",
       .m = 4096,
       .n = 4096,
       .k = 4096,
       .a_type = DataType::kFp8E4M3,
       .b_type = DataType::kFp8E4M3,
       .block_scaled = true},
      {.name = "fp8_large",
       .m = 4096,
       .n = 4096,
       .k = 4096,
       .a_type = DataType::kFp8E4M3,
       .b_type = DataType::kFp8E4M3},
  };
  return kCases;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compiles and checks ptxas's report; skips the check where this build has no NVRTC.
void expect_compiles_clean(const KernelSource& source, const std::string& what) {
  // FUSEDGEMM_TEST_DUMP_DIR=<dir>: writes each compiled source there, to compile by hand:
  //   nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -I src <file>
  if (const char* dir = std::getenv("FUSEDGEMM_TEST_DUMP_DIR")) {
    std::ofstream(std::string(dir) + "/" + what + ".cu", std::ios::binary) << source.source;
  }
  auto report = fusedgemm_test::compile_sm90a(source);
  if (!report) GTEST_SKIP() << "built without NVRTC";
  ASSERT_TRUE(report->compiled) << what << ":\n" << report->log << "\n" << source.source;
  EXPECT_EQ(report->spill_store_bytes, 0) << what << ":\n" << report->log;
  EXPECT_EQ(report->spill_load_bytes, 0) << what << ":\n" << report->log;
  EXPECT_EQ(report->stack_frame_bytes, 0) << what << ":\n" << report->log;
  EXPECT_FALSE(report->wgmma_serialized) << what << ":\n" << report->log;
  EXPECT_GT(report->registers, 0) << what << ":\n" << report->log;
  ::testing::Test::RecordProperty(what + "_registers", report->registers);
  ::testing::Test::RecordProperty(what + "_shared_bytes", static_cast<int>(source.shared_bytes));
  EXPECT_LE(source.shared_bytes, static_cast<std::uint32_t>(kMaxDynamicSharedBytes)) << what;
}

class KernelSourceCompiles : public ::testing::TestWithParam<GemmCase> {};

TEST_P(KernelSourceCompiles, ForSm90aWithoutSpills) {
  const GemmCase& c = GetParam();
  Graph g = make_graph(c);
  auto recipe = recipe_of(g, c.tuning);
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(source) << source.status().message();
  EXPECT_EQ(source->tile_m, recipe->config.tile_m);
  EXPECT_EQ(source->tile_n, recipe->config.tile_n);
  EXPECT_EQ(source->cluster_ctas, recipe->config.cluster_ctas());
  EXPECT_EQ(source->block_threads, 384u);  // a producer and two consumer warpgroups
  expect_compiles_clean(source.value(), c.name);
}

INSTANTIATE_TEST_SUITE_P(KernelSource, KernelSourceCompiles, ::testing::ValuesIn(compile_cases()),
                         [](const auto& info) { return info.param.name; });

// Every kernel shape the cost model may choose, each alone and in a 2-CTA cluster, for the
// operand majors and types it can meet: bf16 K-major, bf16 M-/N-major with B multicast,
// fp8 with A multicast.
const std::vector<GemmCase>& tile_cases() {
  static const std::vector<GemmCase> kCases = [] {
    std::vector<GemmCase> cases;
    for (const KernelShape& t : kKernelShapes) {
      // 160 accumulators leave no room for the stand-in epilogue's 64-bit address per
      // element: KernelCompile.Tile160CompilesWithoutSpills compiles that unit with generated
      // epilogues, which address a row once.
      if (t.tile_m * t.tile_n / 128 > 128 && t.ping_pong) continue;
      const KernelTuning one = pinned_tuning(t, 1, 1);
      const KernelTuning along_m = pinned_tuning(t, 2, 1);
      const KernelTuning along_n = pinned_tuning(t, 1, 2);
      const std::string name = t.name;
      cases.push_back({.name = "bf16_kk_" + name, .m = 512, .n = 512, .k = 256, .tuning = one});
      // 128x192 and 128x64 split B into parts of 96 and 32 columns: not whole 64-column
      // boxes N-major; 128x160 reads B K-major only.
      if (t.tile_n != 192 && t.tile_n != 64 && t.tile_n != 160) {
        cases.push_back({.name = "bf16_mn_" + name + "_cluster2x1",
                         .m = 512,
                         .n = 512,
                         .k = 256,
                         .a_major = Major::kM,
                         .b_major = Major::kN,
                         .tuning = along_m});
      }
      cases.push_back({.name = "fp8_kk_" + name + "_cluster1x2",
                       .m = 512,
                       .n = 512,
                       .k = 256,
                       .a_type = DataType::kFp8E4M3,
                       .b_type = DataType::kFp8E4M3,
                       .tuning = along_n});
    }
    return cases;
  }();
  return kCases;
}

class KernelSourceTiles : public ::testing::TestWithParam<GemmCase> {};

TEST_P(KernelSourceTiles, CompileWithoutSpills) {
  const GemmCase& c = GetParam();
  Graph g = make_graph(c);
  auto recipe = recipe_of(g, c.tuning);
  ASSERT_TRUE(recipe);
  EXPECT_EQ(recipe->config.tile_m, *c.tuning.tile_m);
  EXPECT_EQ(recipe->config.tile_n, *c.tuning.tile_n);
  EXPECT_EQ(recipe->config.cluster_m, *c.tuning.cluster_m);
  EXPECT_EQ(recipe->config.cluster_n, *c.tuning.cluster_n);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(source) << source.status().message();
  expect_compiles_clean(source.value(), c.name);
}

INSTANTIATE_TEST_SUITE_P(KernelSource, KernelSourceTiles, ::testing::ValuesIn(tile_cases()),
                         [](const auto& info) { return info.param.name; });

// A tuning the kernel cannot take is refused, naming what is legal.
TEST(KernelSource, RefusesAnImpossibleTuning) {
  Graph g = make_graph({.name = "tuned"});
  ASSERT_TRUE(g.validate());
  auto analysis = fusion::analyze(g);
  ASSERT_TRUE(analysis);
  KernelTuning rows;
  rows.tile_m = 96;
  const struct {
    KernelTuning tuning;
    const char* message;
  } cases[] = {
      {rows, "units of whole 64-row groups"},
      {pinned_tuning(128, 256, false, 2, 2), "legal: 1x1, 2x1 or 1x2"},
      {pinned_tuning(128, 256, false, 1, 1, 9), "9 stages of 49152 bytes; legal: 2 to 4"},
  };
  for (const auto& t : cases) {
    auto config = recipe::choose_kernel_config(analysis->program, kH200Multiprocessors, t.tuning);
    ASSERT_FALSE(config);
    EXPECT_EQ(config.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(config.status().message().find("kernel_tuning"), std::string::npos);
    EXPECT_NE(config.status().message().find(t.message), std::string::npos)
        << config.status().message();
  }
}

// The debug build of the plain kernel compiles too (printf makes ptxas serialize wgmma and
// use a stack frame there, which is fine for a debug build).
TEST(KernelSource, DebugBuildCompiles) {
  Graph g = make_graph({.name = "debug"});
  auto recipe = recipe_of(g);
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe),
                                       KernelSourceOptions{.debug = true});
  ASSERT_TRUE(source) << source.status().message();
  EXPECT_NE(source->source.find("#define FUSEDGEMM_KERNEL_DEBUG 1"), std::string::npos);
  auto report = fusedgemm_test::compile_sm90a(source.value());
  if (!report) GTEST_SKIP() << "built without NVRTC";
  EXPECT_TRUE(report->compiled) << report->log;
}

// The plain bf16 program gives exactly the golden translation unit. To accept a deliberate
// change: FUSEDGEMM_UPDATE_GOLDEN=1 ./fusedgemm_tests --gtest_filter=KernelSource.Golden*
TEST(KernelSource, GoldenPlainBf16) {
  Graph g = make_graph({.name = "plain_bf16", .m = 200, .n = 300, .k = 72});
  auto recipe = recipe_of(g);
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(source) << source.status().message();
  const std::string path = std::string(FUSEDGEMM_TEST_GOLDEN_DIR) + "/plain_bf16.cu";
  if (std::getenv("FUSEDGEMM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << source->source;
  }
  EXPECT_EQ(source->source, read_file(path)) << "golden file " << path;
  // Same program, same bytes.
  auto again = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->source, source->source);
  EXPECT_EQ(source->program_name, "fusedgemm_plain_bf16.cu");
  EXPECT_EQ(source->entry, "fusedgemm_kernel");
}

// The block-scaled fp8 program gives exactly its golden translation unit: the block-scaled
// mainloop, the scale parameters in the config, the 64x128 tile.
TEST(KernelSource, GoldenBlockScaledFp8) {
  Graph g = make_graph({.name = "block_scaled_fp8",
                        .m = 200,
                        .n = 144,
                        .k = 272,
                        .a_type = DataType::kFp8E4M3,
                        .b_type = DataType::kFp8E4M3,
                        .block_scaled = true});
  auto recipe = recipe_of(g);
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(source) << source.status().message();
  const std::string path = std::string(FUSEDGEMM_TEST_GOLDEN_DIR) + "/block_scaled_fp8.cu";
  if (std::getenv("FUSEDGEMM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << source->source;
  }
  EXPECT_EQ(source->source, read_file(path)) << "golden file " << path;
  EXPECT_NE(source->source.find("#include \"kernels/gemm_sm90_block_scale.cuh\""),
            std::string::npos);
  EXPECT_NE(source->source.find("fusedgemm::kernels::PromoteBlockScales>::run"), std::string::npos);
  // Operands A, B0 are roles 0, 1; their scales roles 2, 3.
  EXPECT_NE(source->source.find("kOperandScaleParam[kOperandCount] = {2, 3};"), std::string::npos);
  // 64-row units (acc and the K block's partial sum), columns in one 128-wide scale block.
  EXPECT_EQ(recipe->config.unit_m(), 64);
  EXPECT_LE(recipe->config.tile_n, 128);
  // The ring, both consumers' staging of the fp32 output D, a full and an empty barrier per
  // stage, two turn barriers, 1 KB alignment slack.
  const auto stage =
      static_cast<std::uint32_t>(recipe::stage_bytes(*recipe->program, recipe->config));
  const auto stages = static_cast<std::uint32_t>(recipe->config.stages);
  EXPECT_EQ(source->shared_bytes,
            stages * stage + 2 * 2 * kernels::kStagedBufferBytes + 16 * stages + 16 + 1024);
}

// Unscaled programs keep the plain mainloop and no scale table.
TEST(KernelSource, UnscaledProgramsKeepThePlainMainloop) {
  Graph g = make_graph({.name = "fp8", .a_type = DataType::kFp8E4M3, .b_type = DataType::kFp8E4M3});
  auto recipe = recipe_of(g);
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(source) << source.status().message();
  EXPECT_NE(source->source.find("#include \"kernels/gemm_sm90.cuh\""), std::string::npos);
  EXPECT_EQ(source->source.find("BlockScaled"), std::string::npos);
  EXPECT_EQ(source->source.find("kOperandScaleParam"), std::string::npos);
}

struct TmaCase {
  Major a_major;
  Major b_major;
  TmaPlan a;
  TmaPlan b;
};

// K-major: one box {64 (K), rows, 1} over axes (K, M|N, b); M-/N-major: {64 (M|N), 64 (K), 1}
// over (M|N, K, b), repeated per 64 rows. Parameter = recipe role, slot = operand index. A
// 2-CTA cluster loads its shared operand in halves: B along M, A along N. The fp32 output D
// (role 2) is stored through the first store slot in boxes of 32 columns (128 bytes) x 64 rows
// over (N, M, b), staged in 16 KB per consumer.
TEST(KernelSource, TmaPlansFollowMajors) {
  const KernelTuning tile = pinned_tuning(128, 128, false, 1, 1, 3);
  const KernelTuning along_m = pinned_tuning(128, 128, false, 2, 1, 3);
  const KernelTuning along_n = pinned_tuning(128, 128, false, 1, 2, 3);
  const std::vector<std::pair<TmaCase, KernelTuning>> cases = {
      {{Major::kK,
        Major::kK,
        {0, 0, 2, {2, 1, 0}, {64, 128, 1}, 128},
        {1, 1, 2, {2, 1, 0}, {64, 128, 1}, 128}},
       tile},
      {{Major::kM,
        Major::kK,
        {0, 0, 2, {1, 2, 0}, {64, 64, 1}, 128},
        {1, 1, 2, {2, 1, 0}, {64, 128, 1}, 128}},
       tile},
      {{Major::kK,
        Major::kN,
        {0, 0, 2, {2, 1, 0}, {64, 128, 1}, 128},
        {1, 1, 2, {1, 2, 0}, {64, 64, 1}, 128}},
       tile},
      {{Major::kM,
        Major::kN,
        {0, 0, 2, {1, 2, 0}, {64, 64, 1}, 128},
        {1, 1, 2, {1, 2, 0}, {64, 64, 1}, 128}},
       tile},
      {{Major::kK,
        Major::kK,
        {0, 0, 2, {2, 1, 0}, {64, 128, 1}, 128},
        {1, 1, 2, {2, 1, 0}, {64, 64, 1}, 128}},
       along_m},
      {{Major::kK,
        Major::kK,
        {0, 0, 2, {2, 1, 0}, {64, 64, 1}, 128},
        {1, 1, 2, {2, 1, 0}, {64, 128, 1}, 128}},
       along_n},
  };
  for (const auto& [t, tuning] : cases) {
    Graph g = make_graph({.name = "tma", .a_major = t.a_major, .b_major = t.b_major});
    auto recipe = recipe_of(g, tuning);
    ASSERT_TRUE(recipe);
    auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
    ASSERT_TRUE(source) << source.status().message();
    ASSERT_EQ(source->tma.size(), 3u);
    SCOPED_TRACE(recipe::describe(recipe->config));
    EXPECT_EQ(source->tma[0], t.a) << fusion::to_string(t.a_major);
    EXPECT_EQ(source->tma[1], t.b) << fusion::to_string(t.b_major);
    EXPECT_EQ(source->tma[2],
              (TmaPlan{2, kernels::kMaxTmaDescriptors, 4, {2, 1, 0}, {32, 64, 1}, 128, 0}));
    // Ring of 3 stages of 32 KB, 2 x 16 KB of staging, a full and an empty barrier each, 1 KB
    // alignment slack.
    EXPECT_EQ(source->shared_bytes, 3u * 32768 + 2 * 16384 + 48 + 16 + 1024);
  }
}

// Full 16- and 32-bit aux are TMA-loaded in sub-tiles of 64 rows x 64 bytes in the 64-byte
// swizzle (kernels/epilogue_aux_tiles.cuh), at descriptor slots after the stored outputs' and
// with tma_tiles bits after theirs; with aux_buffers 0 they are read from global memory and
// get no descriptor.
TEST(KernelSource, FullAuxTakeTmaLoadPlans) {
  Graph g = make_graph({.name = "aux", .full_aux = {DataType::kBFloat16, DataType::kFloat32}});
  auto recipe = recipe_of(g);
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(source) << source.status().message();
  ASSERT_EQ(source->tma.size(), 5u);  // A, B0, the stored output D, X0, X1
  const auto param_of = [&](int aux) {
    for (std::size_t i = 0; i < recipe->roles.size(); ++i) {
      const auto& role = recipe->roles[i];
      if (role.kind == recipe::ParamKind::kAux && role.index == aux) return static_cast<int>(i);
    }
    return -1;
  };
  EXPECT_EQ(source->tma[3], (TmaPlan{param_of(0),
                                     kernels::kTmaAuxSlot,
                                     2,
                                     {2, 1, 0},
                                     {32, 64, 1},
                                     64,
                                     kernels::kMaxTmaStores}));
  EXPECT_EQ(source->tma[4], (TmaPlan{param_of(1),
                                     kernels::kTmaAuxSlot + 1,
                                     4,
                                     {2, 1, 0},
                                     {16, 64, 1},
                                     64,
                                     kernels::kMaxTmaStores + 1}));
  EXPECT_NE(source->source.find("kLoadedAux = 2;"), std::string::npos);

  // At one tile and ring, the loaded aux's buffers and barriers are all that differs in
  // shared memory.
  KernelTuning one = pinned_tuning(128, 128, false, 1, 1);
  one.stages = 3;
  one.aux_buffers = 1;
  KernelTuning direct = one;
  direct.aux_buffers = 0;
  auto loaded = recipe_of(g, one);
  auto unloaded = recipe_of(g, direct);
  ASSERT_TRUE(loaded && unloaded);
  auto with = generate_kernel_source(*loaded, fusedgemm_test::stand_in_epilogue(*loaded));
  auto without = generate_kernel_source(*unloaded, fusedgemm_test::stand_in_epilogue(*unloaded));
  ASSERT_TRUE(with && without);
  EXPECT_EQ(without->tma.size(), 3u);
  EXPECT_NE(without->source.find("kLoadedAux = 0;"), std::string::npos);
  EXPECT_EQ(with->shared_bytes - without->shared_bytes,
            2u * static_cast<std::uint32_t>(recipe::aux_tile_bytes(loaded->config)));
  // Two aux x one 4 KB buffer, and a barrier each, in whole 1 KB atoms.
  EXPECT_EQ(recipe::aux_tile_bytes(loaded->config), 9 * 1024);
}

TEST(KernelSource, GatedMlpSharesTheATile) {
  Graph g = make_graph({.name = "gated", .gated = true});
  auto recipe = recipe_of(g, pinned_tuning(128, 128, false, 1, 1));
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_TRUE(source) << source.status().message();
  ASSERT_EQ(source->tma.size(), 4u);  // A once, B0, B1, then the stored output D
  EXPECT_EQ(source->tma[3].tile_bit, 0);
  EXPECT_EQ(source->tma[1].box, (std::array<std::uint32_t, 3>{64, 128, 1}));
  EXPECT_NE(source->source.find("kGemmA[kGemmCount] = {0, 0};"), std::string::npos);
  EXPECT_NE(source->source.find("kGemmB[kGemmCount] = {1, 2};"), std::string::npos);
}

// The support gate declines these graphs first; the generator refuses them on its own too,
// so a gate change cannot turn them into wrong kernels. Programs are edited past the gate.
std::optional<recipe::Recipe> edited_recipe(const GemmCase& c,
                                            void (*edit)(FusionProgram& program)) {
  Graph g = make_graph(c);
  auto recipe = recipe_of(g);
  if (!recipe) return std::nullopt;
  FusionProgram program = *recipe->program;
  edit(program);
  auto shared = std::make_shared<const FusionProgram>(std::move(program));
  // The config chosen for the program before the edit: the generator sees what the gate and
  // the cost model would never pass it.
  auto edited = recipe::make_recipe(shared, recipe->config);
  if (!edited) return std::nullopt;
  return std::move(edited).value();
}

void expect_unavailable(const std::optional<recipe::Recipe>& recipe, const std::string& message) {
  ASSERT_TRUE(recipe);
  auto source = generate_kernel_source(*recipe, fusedgemm_test::stand_in_epilogue(*recipe));
  ASSERT_FALSE(source);
  EXPECT_EQ(source.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(source.status().message().find(message), std::string::npos)
      << source.status().message();
}

TEST(KernelSource, RefusesFp8NotKMajorNamingTheOperand) {
  expect_unavailable(
      edited_recipe({.name = "fp8_mk", .a_type = DataType::kFp8E4M3, .b_type = DataType::kFp8E4M3},
                    [](FusionProgram& p) { p.operands[0].major = Major::kM; }),
      "kernel_operand_major: role A 'A': fp8_e4m3 M-major; legal: fp8 operands K-major");
}

TEST(KernelSource, RefusesMixedSixteenBitTypes) {
  expect_unavailable(edited_recipe({.name = "mixed"},
                                   [](FusionProgram& p) {
                                     p.buffers[p.operands[1].buffer].data_type = DataType::kFloat16;
                                   }),
                     "kernel_operand_type: role A 'A': bf16 times role B 'B0' fp16 in GEMM "
                     "'gemm0'");
}

// Past the gate a program could mix a block-scaled GEMM with an unscaled one; the kernel has
// one mainloop, so the generator refuses it naming the operand.
TEST(KernelSource, RefusesScaledNextToUnscaledOperands) {
  expect_unavailable(edited_recipe({.name = "mixed_scaling",
                                    .a_type = DataType::kFp8E4M3,
                                    .b_type = DataType::kFp8E4M3,
                                    .gated = true,
                                    .block_scaled = true},
                                   [](FusionProgram& p) { p.operands[2].block_scale.reset(); }),
                     "kernel_block_scale: role B 'B1': not block-scaled next to role A 'A', "
                     "block-scaled");
}

// Three block-scaled GEMMs need 3 x 2 fragments of 32 registers even at 64x64.
TEST(KernelSource, RefusesThreeBlockScaledGemms) {
  expect_unavailable(edited_recipe({.name = "three_scaled",
                                    .a_type = DataType::kFp8E4M3,
                                    .b_type = DataType::kFp8E4M3,
                                    .gated = true,
                                    .block_scaled = true},
                                   [](FusionProgram& p) { p.gemms.push_back(p.gemms.front()); }),
                     "kernel_block_scale: graph 'three_scaled': 3 block-scaled GEMMs; legal: at "
                     "most 2");
}

TEST(KernelSource, RefusesFp4NamingTheOperand) {
  expect_unavailable(edited_recipe({.name = "fp4"},
                                   [](FusionProgram& p) {
                                     p.buffers[p.operands[1].buffer].data_type = DataType::kFp4E2M1;
                                   }),
                     "kernel_operand_type: role B 'B0': fp4_e2m1 operands are not generated yet");
}

// Every example the gate accepts generates a kernel that compiles clean; fallback_only is
// declined earlier.
TEST(KernelSource, Examples) {
  for (const auto& file : fusedgemm_test::example_files()) {
    SCOPED_TRACE(file.string());
    auto graph = load_graph(file.string());
    ASSERT_TRUE(graph) << graph.status().message();
    ASSERT_TRUE(graph->validate());
    auto analysis = fusion::analyze(graph.value());
    ASSERT_TRUE(analysis);
    if (analysis->decline || recipe::check_support(analysis->program)) continue;
    auto program = std::make_shared<const FusionProgram>(std::move(analysis->program));
    auto config = recipe::choose_kernel_config(*program, kH200Multiprocessors);
    ASSERT_TRUE(config) << config.status().message();
    auto recipe = recipe::make_recipe(program, config.value());
    ASSERT_TRUE(recipe) << recipe.status().message();
    auto source =
        generate_kernel_source(recipe.value(), fusedgemm_test::stand_in_epilogue(recipe.value()));
    ASSERT_TRUE(source) << source.status().message();
    expect_compiles_clean(source.value(), file.stem().string());
  }
}

// The library carries the headers it was built with: each embedded header equals its file.
TEST(KernelSource, EmbedsTheKernelHeaders) {
  auto headers = embedded_kernel_headers();
  std::vector<std::string> names;
  for (const auto& h : headers) {
    names.emplace_back(h.name);
    EXPECT_EQ(h.contents,
              read_file(std::string(FUSEDGEMM_TEST_SOURCE_DIR) + "/" + std::string(h.name)))
        << h.name;
  }
  for (const char* name :
       {"kernels/gemm_sm90.cuh", "kernels/gemm_sm90_block_scale.cuh",
        "kernels/gemm_sm90_config.cuh", "kernels/epilogue_contract.cuh", "kernels/kernel_args.h",
        "kernels/tile_scheduler.cuh", "kernels/ptx/wgmma.cuh", "kernels/ptx/tma.cuh",
        "kernels/ptx/cluster.cuh", "kernels/ptx/registers.cuh"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

}  // namespace
}  // namespace fusedgemm::codegen
