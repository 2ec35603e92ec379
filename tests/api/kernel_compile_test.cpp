// Every example graph the support gate accepts, and a few layout and size variants, is
// generated and compiled for sm_90a by api::compile_fused_kernel (no GPU needed); ptxas must
// report no spills, no stack frame and shared memory within the 227 KB an sm_90 CTA may use.
#include "api/kernel_build.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include "jit/jit_test_util.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "example_files.h"
#include "fusedgemm/graph.h"
#include "fusedgemm/graph_json.h"
#include "fusion/analyze.h"
#include "jit/context.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "recipe/support_gate.h"
#include "reference/resize.h"
#include "support/flavor_graphs.h"

using namespace fusedgemm;

namespace {

// The most dynamic plus static shared memory one CTA of an sm_90 GPU may use.
constexpr std::uint64_t kMaxSharedBytes = 227 * 1024;

using jit::testing::TempDir;

// The H200's multiprocessors: the kernels are chosen as build() would choose them there.
constexpr int kH200Multiprocessors = 132;

struct Variant {
  std::string name;
  std::string file;
  reference::ProblemOverride size;
  int unit_m = 64;  // each consumer's half of the tile choose_kernel_config must pick
};

// What the generator emits beyond the examples' own shapes: the other operand majors, a
// small M, a batch; block-scaled fp8 (64-row units: acc and the K block's partial sum share
// the registers) with a ragged K tail and batch, and at M = 1; and every flavor at the LLM
// sizes the benchmarks run, where the large tiles (128 accumulators per consumer) are taken,
// and at a short K and a decode-size M, where ping-pong 64x128 is (two GEMMs' accumulators,
// taps, quantized outputs; a split K).
const std::vector<Variant>& variants() {
  static const std::vector<Variant> kTable = [] {
    reference::ProblemOverride majors, small_m, batched, scaled_ragged, scaled_m1, large, mlp,
        short_k, decode;
    majors.a_k_major = false;
    majors.b_k_major = false;
    small_m.m = 64;
    batched.batch = 3;
    scaled_ragged = {3, 200, 144, 272, {}, {}};
    scaled_m1 = {1, 1, 256, 384, {}, {}};
    large = {1, 4096, 4096, 4096, {}, {}};
    mlp = {1, 4096, 11008, 4096, {}, {}};
    short_k = {1, 8192, 8192, 1024, {}, {}};
    decode = {1, 16, 4096, 4096, {}, {}};
    std::vector<Variant> table{
        {"MMajorANMajorB", "plain.json", majors},
        {"SmallM", "plain.json", small_m},
        {"Batch3", "epilogue.json", batched},
        {"BlockScaledRaggedKBatch3", "block_scaled_fp8.json", scaled_ragged},
        {"BlockScaledM1", "block_scaled_fp8.json", scaled_m1},
        {"Epilogue4096x11008", "epilogue.json", mlp},
        {"Plain4096MMajorANMajorB", "plain.json", {1, 4096, 4096, 4096, false, false}},
    };
    for (const char* file :
         {"plain", "aux_bias", "batched", "block_scaled_fp8", "dual_gemm", "epilogue",
          "fp8_per_tensor", "gated_mlp", "multi_output", "quantized_output", "taps", "taps_only"}) {
      table.push_back({std::string(file) + "_4096", std::string(file) + ".json", large});
    }
    for (const char* file : {"gated_mlp", "dual_gemm", "taps", "quantized_output"}) {
      table.push_back(
          {std::string(file) + "_8192x8192x1024", std::string(file) + ".json", short_k});
    }
    // The plain GEMM at a short K takes ping-pong 128x160 (160 accumulators a consumer).
    table.push_back({"plain_8192x8192x1024", "plain.json", short_k, 128});
    for (const char* file : {"plain", "taps", "aux_bias"}) {
      table.push_back({std::string(file) + "_16x4096x4096", std::string(file) + ".json", decode});
    }
    // A ragged mid-size problem where the taps keep the kernel off clusters: ping-pong
    // without a cluster, whose schedule, worked out before the warp roles split, once spilled
    // across the producer's setmaxnreg.
    table.push_back({"batched_3x1104x2104x272", "batched.json", {3, 1104, 2104, 272, {}, {}}});
    table.push_back({"taps_1104x2104x272", "taps.json", {1, 1104, 2104, 272, {}, {}}});
    return table;
  }();
  return kTable;
}

// Loads, optionally resizes, analyzes and gates a graph. nullopt (with the reason in
// `declined`) when the support gate refuses it.
std::optional<recipe::Recipe> make_recipe(Graph& graph, const reference::ProblemOverride& size,
                                          std::string& declined) {
  EXPECT_TRUE(graph.validate().is_ok());
  if (size.any()) {
    const Status resized = reference::resize_graph(graph, size);
    EXPECT_TRUE(resized.is_ok()) << resized.message();
    EXPECT_TRUE(graph.validate().is_ok());
  }
  auto analysis = fusion::analyze(graph);
  EXPECT_TRUE(analysis.is_ok()) << analysis.status().message();
  if (!analysis) return std::nullopt;
  std::optional<Decline> decline = analysis->decline;
  if (!decline) decline = recipe::check_support(analysis->program);
  if (decline) {
    declined = decline->message;
    return std::nullopt;
  }
  auto program = std::make_shared<const fusion::FusionProgram>(std::move(analysis->program));
  auto config = recipe::choose_kernel_config(*program, kH200Multiprocessors);
  EXPECT_TRUE(config.is_ok()) << config.status().message();
  if (!config) return std::nullopt;
  auto recipe = recipe::make_recipe(program, config.value());
  EXPECT_TRUE(recipe.is_ok()) << recipe.status().message();
  if (!recipe) return std::nullopt;
  return std::move(recipe.value());
}

std::optional<recipe::Recipe> make_recipe(const std::filesystem::path& file,
                                          const reference::ProblemOverride& size,
                                          std::string& declined) {
  auto graph = load_graph(file.string());
  EXPECT_TRUE(graph.is_ok()) << graph.status().message();
  if (!graph) return std::nullopt;
  return make_recipe(graph.value(), size, declined);
}

// Compiles `recipe` in a fresh Context and checks the kernel and its ptxas report, then that
// a second compile of it is served from memory.
void expect_compiles_cleanly(recipe::Recipe& recipe) {
  const TempDir dir;
  auto context = jit::testing::hermetic_context(dir.path());
  if (!context && context.status().code() == ErrorCode::kUnavailable) {
    GTEST_SKIP() << "no NVRTC: " << context.status().message();
  }
  ASSERT_TRUE(context.is_ok()) << context.status().message();

  auto kernel = api::compile_fused_kernel(recipe, *context.value());
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().message();
  EXPECT_EQ(kernel->compiled.outcome, jit::CacheOutcome::kCompiled);

  const std::vector<std::uint8_t>& cubin = kernel->image.cubin;
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin[0], 0x7F);
  EXPECT_EQ(cubin[1], 'E');
  EXPECT_EQ(cubin[2], 'L');
  EXPECT_EQ(cubin[3], 'F');

  const jit::FunctionResources* entry = kernel->compiled.kernel->resources.find("fusedgemm_kernel");
  ASSERT_NE(entry, nullptr) << kernel->compiled.kernel->log;
  EXPECT_TRUE(entry->is_entry);
  EXPECT_GT(entry->registers, 0);
  EXPECT_EQ(entry->spill_store_bytes, 0u) << kernel->compiled.kernel->log;
  EXPECT_EQ(entry->spill_load_bytes, 0u) << kernel->compiled.kernel->log;
  EXPECT_EQ(entry->stack_frame_bytes, 0u) << kernel->compiled.kernel->log;
  // wgmma pipelined and setmaxnreg honoured: no C75xx "Potential Performance Loss".
  EXPECT_TRUE(kernel->compiled.kernel->resources.performance_warnings.empty())
      << kernel->compiled.kernel->log;
  EXPECT_GT(recipe.config.shared_bytes, 0u);
  EXPECT_LE(recipe.config.shared_bytes + entry->shared_static_bytes, kMaxSharedBytes)
      << recipe.config.shared_bytes << " dynamic + " << entry->shared_static_bytes << " static";
  testing::Test::RecordProperty("registers", entry->registers);
  std::printf(
      "  %s: %d registers, %llu bytes spill stores, %llu bytes spill loads, %llu bytes "
      "stack, %u bytes dynamic shared memory\n",
      recipe.program->graph_name.c_str(), entry->registers,
      static_cast<unsigned long long>(entry->spill_store_bytes),
      static_cast<unsigned long long>(entry->spill_load_bytes),
      static_cast<unsigned long long>(entry->stack_frame_bytes), recipe.config.shared_bytes);

  auto again = api::compile_fused_kernel(recipe, *context.value());
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ(again->compiled.outcome, jit::CacheOutcome::kMemoryHit);
  EXPECT_EQ(again->compiled.kernel, kernel->compiled.kernel);
  EXPECT_EQ(context.value()->counters().compiles, 1);
}

class KernelCompileExample : public testing::TestWithParam<std::filesystem::path> {};

TEST_P(KernelCompileExample, CompilesWithoutSpills) {
  std::string declined;
  std::optional<recipe::Recipe> recipe = make_recipe(GetParam(), {}, declined);
  if (!declined.empty()) GTEST_SKIP() << "declined by the support gate: " << declined;
  ASSERT_TRUE(recipe.has_value());
  expect_compiles_cleanly(*recipe);
}

INSTANTIATE_TEST_SUITE_P(KernelCompile, KernelCompileExample,
                         testing::ValuesIn(fusedgemm_test::example_files()),
                         [](const auto& info) { return fusedgemm_test::example_name(info.param); });

// The block-scaled example takes the block-scaled stage math at 64-row units whose columns
// lie in one 128-wide scale block.
TEST(KernelCompile, BlockScaledFp8TakesTheBlockScaledMainloop) {
  std::string declined;
  std::optional<recipe::Recipe> recipe = make_recipe(
      std::filesystem::path(FUSEDGEMM_EXAMPLES_DIR) / "block_scaled_fp8.json", {}, declined);
  ASSERT_TRUE(declined.empty()) << declined;
  ASSERT_TRUE(recipe.has_value());
  EXPECT_EQ(recipe->config.unit_m(), 64);
  EXPECT_LE(recipe->config.tile_n, 128);
  EXPECT_EQ(recipe->config.tile_k, 128);  // one K step per 128-wide scale block
  expect_compiles_cleanly(*recipe);
}

// The epilogue still fits next to the block-scaled mainloop when it is heavy: the example's
// D plus gelu(D + bias[1, 1, N]) stored as bf16, a row-sum tap and an amax tap.
TEST(KernelCompile, BlockScaledFp8WithAHeavyEpilogue) {
  auto graph = load_graph(
      (std::filesystem::path(FUSEDGEMM_EXAMPLES_DIR) / "block_scaled_fp8.json").string());
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto d = graph->find_tensor("D");
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const std::int64_t m = d.value()->dims()[1];
  const std::int64_t n = d.value()->dims()[2];
  auto bias = graph->tensor(
      TensorAttributes().set_name("bias").set_dim({1, 1, n}).set_stride({n, n, 1}).set_data_type(
          DataType::kFloat32));
  auto biased =
      graph->pointwise(d.value(), bias, PointwiseAttributes().set_mode(PointwiseMode::kAdd));
  auto act = graph->pointwise(biased, PointwiseAttributes().set_mode(PointwiseMode::kGeluErf));
  act->set_name("E").set_data_type(DataType::kBFloat16).set_output(true);
  auto row_sum = graph->reduction(act, ReductionAttributes().set_mode(ReductionMode::kAdd));
  row_sum->set_name("row_sum")
      .set_dim({1, m, 1})
      .set_stride({m, 1, 1})
      .set_data_type(DataType::kFloat32)
      .set_output(true);
  auto amax = graph->reduction(biased, ReductionAttributes().set_mode(ReductionMode::kAmax));
  amax->set_name("amax")
      .set_dim({1, 1, 1})
      .set_stride({1, 1, 1})
      .set_data_type(DataType::kFloat32)
      .set_output(true);
  std::string declined;
  std::optional<recipe::Recipe> recipe = make_recipe(graph.value(), {}, declined);
  ASSERT_TRUE(declined.empty()) << declined;
  ASSERT_TRUE(recipe.has_value());
  EXPECT_EQ(recipe->config.unit_m(), 64);
  EXPECT_LE(recipe->config.tile_n, 128);
  expect_compiles_cleanly(*recipe);
}

// The analyzed program of a flavor graph at `shape`; null where the graph fails to build or
// analyze (a recorded failure) or the support gate declines it (none recorded).
std::shared_ptr<const fusion::FusionProgram> flavor_program(test::Flavor flavor,
                                                            const test::FlavorShape& shape) {
  auto fg = test::make_flavor_graph(flavor, shape);
  if (!fg) {
    ADD_FAILURE() << fg.status().message();
    return nullptr;
  }
  auto analysis = fusion::analyze(fg->graph);
  if (!analysis) {
    ADD_FAILURE() << analysis.status().message();
    return nullptr;
  }
  if (analysis->decline || recipe::check_support(analysis->program)) return nullptr;
  return std::make_shared<const fusion::FusionProgram>(std::move(analysis->program));
}

// A tuned staging depth compiles clean on both consumer splits: 4 buffers per output (a
// 64x256 unit's bf16 sub-tiles, half an fp32 output's), for one staged output (plain) and
// for two (multi_output's fp32 and fp16, whose bulk groups interleave).
TEST(KernelCompile, DeeperStagingCompilesWithoutSpills) {
  for (const auto& [flavor, staged] :
       {std::pair{test::Flavor::kPlain, 1}, std::pair{test::Flavor::kMultiOutput, 2}}) {
    for (const bool ping_pong : {false, true}) {
      SCOPED_TRACE(fmt::format("{}, {}", test::to_string(flavor),
                               ping_pong ? "ping-pong 64x256" : "128x256"));
      const auto program = flavor_program(flavor, {.batch = 1, .m = 512, .n = 512, .k = 256});
      ASSERT_NE(program, nullptr);
      KernelTuning tuning;
      tuning.tile_m = ping_pong ? 64 : 128;
      tuning.tile_n = 256;
      tuning.ping_pong = ping_pong;
      tuning.staging_buffers = 4;
      auto config = recipe::choose_kernel_config(*program, kH200Multiprocessors, tuning);
      ASSERT_TRUE(config.is_ok()) << config.status().message();
      EXPECT_EQ(config->staging_buffers, 4);
      EXPECT_EQ(config->staged_outputs, staged);
      auto recipe = recipe::make_recipe(program, config.value());
      ASSERT_TRUE(recipe.is_ok()) << recipe.status().message();
      expect_compiles_cleanly(recipe.value());
    }
  }
}

// Tiles 160 columns wide (cuBLASLt's at 4096 x 11008 x 4096): on 64x160 units every flavor
// the tile takes compiles clean, and so does the plain GEMM on a ping-pong 128x160 unit (160
// accumulators). Both store 64-byte sub-tile rows of a bf16 output; an N-major B has no
// whole 64-element boxes there and is refused.
TEST(KernelCompile, Tile160CompilesWithoutSpills) {
  int compiled = 0;
  for (const bool ping_pong : {false, true}) {
    for (const test::Flavor flavor : test::all_flavors()) {
      if (ping_pong && flavor != test::Flavor::kPlain) continue;
      // A column tap of every reduction mode holds unit_n / 4 partials per mode beside the
      // accumulators: past kMaxHeldFloats at every tile, so the model takes the tile holding
      // the fewest (128x128 and smaller), where it compiles clean.
      if (flavor == test::Flavor::kTapsColumn) continue;
      SCOPED_TRACE(fmt::format("{}, {}", test::to_string(flavor),
                               ping_pong ? "ping-pong 128x160" : "128x160"));
      const auto program = flavor_program(flavor, {.batch = 1, .m = 512, .n = 480, .k = 256});
      if (program == nullptr) continue;  // declined by the support gate (or failed above)
      KernelTuning tuning;
      tuning.tile_m = 128;
      tuning.tile_n = 160;
      tuning.ping_pong = ping_pong;
      tuning.cluster_m = 2;
      tuning.cluster_n = 1;
      auto config = recipe::choose_kernel_config(*program, kH200Multiprocessors, tuning);
      if (!config) {
        // Only the rules that bound registers and blocks refuse a tile the kernel has.
        EXPECT_NE(flavor, test::Flavor::kPlain) << config.status().message();
        continue;
      }
      auto recipe = recipe::make_recipe(program, config.value());
      ASSERT_TRUE(recipe.is_ok()) << recipe.status().message();
      expect_compiles_cleanly(recipe.value());
      ++compiled;
    }
  }
  EXPECT_GE(compiled, 8);

  const auto n_major =
      flavor_program(test::Flavor::kPlain,
                     {.batch = 1, .m = 512, .n = 480, .k = 256, .b_major = fusion::Major::kN});
  ASSERT_NE(n_major, nullptr);
  KernelTuning tuning;
  tuning.tile_m = 128;
  tuning.tile_n = 160;
  auto refused = recipe::choose_kernel_config(*n_major, kH200Multiprocessors, tuning);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("is N-major; legal: a K-major B"), std::string::npos)
      << refused.status().message();
}

class KernelCompileVariant : public testing::TestWithParam<Variant> {};

TEST_P(KernelCompileVariant, CompilesWithoutSpills) {
  const Variant& v = GetParam();
  std::string declined;
  std::optional<recipe::Recipe> recipe =
      make_recipe(std::filesystem::path(FUSEDGEMM_EXAMPLES_DIR) / v.file, v.size, declined);
  ASSERT_TRUE(declined.empty()) << declined;
  ASSERT_TRUE(recipe.has_value());
  EXPECT_EQ(recipe->config.unit_m(), v.unit_m) << recipe::describe(recipe->config);
  std::printf("  %s: %s\n", v.name.c_str(), recipe::describe(recipe->config).c_str());
  expect_compiles_cleanly(*recipe);
}

INSTANTIATE_TEST_SUITE_P(KernelCompile, KernelCompileVariant, testing::ValuesIn(variants()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
