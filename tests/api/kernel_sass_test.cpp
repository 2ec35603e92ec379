// The plain kernel as the H200 gets it (128x256 tiles, a 2-CTA cluster), disassembled: its
// mainloop is wgmma (HGMMA 64x256), its loads TMA with multicast, setmaxnreg survived (no
// C7508), nothing lives in local memory (no LDL/STL), and no rare case costs every tile.
// Needs cuobjdump and nvdisasm (.ci/run installs PyPI's nvidia-cuda-cuobjdump and
// nvidia-cuda-nvdisasm): found through FUSEDGEMM_CUOBJDUMP, else on PATH; skipped where there
// is none.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "api/kernel_build.h"
#include "fusedgemm/context.h"
#include "fusion/analyze.h"
#include "jit/context.h"
#include "jit/jit_test_util.h"
#include "recipe/kernel_config.h"
#include "recipe/recipe.h"
#include "support/flavor_graphs.h"

namespace fusedgemm {
namespace {

constexpr int kH200Multiprocessors = 132;

std::string cuobjdump() {
  if (const char* path = std::getenv("FUSEDGEMM_CUOBJDUMP"); path != nullptr && *path != 0) {
    return path;
  }
  return std::system("cuobjdump --version > /dev/null 2>&1") == 0 ? "cuobjdump" : "";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The plain kernel at 4096^3 for the H200, disassembled, or why not: a skip (no cuobjdump,
// no NVRTC) sets `skip`; a failure records itself in the calling test and leaves both empty.
struct PlainSass {
  std::string sass;
  std::string skip;
};

PlainSass plain_sass() {
  const std::string tool = cuobjdump();
  if (tool.empty()) return {"", "no cuobjdump (set FUSEDGEMM_CUOBJDUMP)"};
  const jit::testing::TempDir dir;
  auto context = jit::testing::hermetic_context(dir.path() / "cache");
  if (!context && context.status().code() == ErrorCode::kUnavailable) {
    return {"", "no NVRTC: " + context.status().message()};
  }
  EXPECT_TRUE(context) << context.status().message();
  auto fg = test::make_flavor_graph(test::Flavor::kPlain, {.m = 4096, .n = 4096, .k = 4096});
  EXPECT_TRUE(fg) << fg.status().message();
  if (!context || !fg) return {};
  auto analysis = fusion::analyze(fg->graph);
  EXPECT_TRUE(analysis) << analysis.status().message();
  if (!analysis) return {};
  auto program = std::make_shared<const fusion::FusionProgram>(analysis->program);
  auto config = recipe::choose_kernel_config(*program, kH200Multiprocessors);
  EXPECT_TRUE(config) << config.status().message();
  if (!config) return {};
  EXPECT_EQ(config->tile_n, 256);
  EXPECT_EQ(config->cluster_ctas(), 2);
  auto recipe = recipe::make_recipe(program, config.value());
  EXPECT_TRUE(recipe) << recipe.status().message();
  if (!recipe) return {};
  auto kernel = api::compile_fused_kernel(recipe.value(), *context.value());
  EXPECT_TRUE(kernel) << kernel.status().message();
  if (!kernel) return {};

  const auto cubin = dir.path() / "plain.cubin";
  {
    std::ofstream out(cubin, std::ios::binary);
    out.write(reinterpret_cast<const char*>(kernel->image.cubin.data()),
              static_cast<std::streamsize>(kernel->image.cubin.size()));
  }
  const auto sass_path = dir.path() / "plain.sass";
  const std::string command = "\"" + tool + "\" --dump-sass \"" + cubin.string() + "\" > \"" +
                              sass_path.string() + "\" 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command << "\n" << read_text(sass_path);
  return {read_text(sass_path), ""};
}

TEST(KernelSass, PlainKernelIsHgmmaAndTmaWithNoLocalMemory) {
  const PlainSass plain = plain_sass();
  if (!plain.skip.empty()) GTEST_SKIP() << plain.skip;
  ASSERT_FALSE(plain.sass.empty());
  const std::string& sass = plain.sass;
  EXPECT_NE(sass.find("HGMMA.64x256x16.F32.BF16"), std::string::npos) << "no 64x256 wgmma";
  EXPECT_NE(sass.find("UTMALDG.3D.MULTICAST"), std::string::npos) << "no TMA multicast";
  EXPECT_NE(sass.find("USETMAXREG"), std::string::npos) << "setmaxnreg dropped";
  EXPECT_FALSE(std::regex_search(sass, std::regex(R"(\b(LDL|STL)\b)")))
      << "local memory in the plain kernel";
}

// What the plain kernel needs only rarely does not run on every tile: K = 0's zeroing of the
// accumulators stays a branch (if-converted, it was 128 FSELs a tile), and a bf16 output is
// converted once (rounding to bf16, then converting again for the store, was two F2Fs a
// value).
TEST(KernelSass, PlainKernelRunsNoRareCaseCodeOnEveryTile) {
  const PlainSass plain = plain_sass();
  if (!plain.skip.empty()) GTEST_SKIP() << plain.skip;
  ASSERT_FALSE(plain.sass.empty());
  EXPECT_FALSE(std::regex_search(plain.sass, std::regex(R"(\bFSEL\b)")))
      << "a select per accumulator: the K = 0 zeroing was if-converted";
  EXPECT_FALSE(std::regex_search(plain.sass, std::regex(R"(\bF2F\.BF16\.F32\b)")))
      << "bf16 converted twice before the store";
}

}  // namespace
}  // namespace fusedgemm
