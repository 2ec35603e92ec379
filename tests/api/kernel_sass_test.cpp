// The plain kernel as the H200 gets it (128x256 tiles, a 2-CTA cluster), disassembled: its
// mainloop is wgmma (HGMMA 64x256), its loads TMA with multicast, setmaxnreg survived (no
// C7508), and nothing lives in local memory (no LDL/STL). Needs cuobjdump and nvdisasm
// (.ci/run installs PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm): found through
// FUSEDGEMM_CUOBJDUMP, else on PATH; skipped where there is none.
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

TEST(KernelSass, PlainKernelIsHgmmaAndTmaWithNoLocalMemory) {
  const std::string tool = cuobjdump();
  if (tool.empty()) GTEST_SKIP() << "no cuobjdump (set FUSEDGEMM_CUOBJDUMP)";
  const jit::testing::TempDir dir;
  auto context = jit::testing::hermetic_context(dir.path() / "cache");
  if (!context && context.status().code() == ErrorCode::kUnavailable) {
    GTEST_SKIP() << "no NVRTC: " << context.status().message();
  }
  ASSERT_TRUE(context) << context.status().message();
  auto fg = test::make_flavor_graph(test::Flavor::kPlain, {.m = 4096, .n = 4096, .k = 4096});
  ASSERT_TRUE(fg) << fg.status().message();
  auto analysis = fusion::analyze(fg->graph);
  ASSERT_TRUE(analysis) << analysis.status().message();
  auto program = std::make_shared<const fusion::FusionProgram>(analysis->program);
  auto config = recipe::choose_kernel_config(*program, kH200Multiprocessors);
  ASSERT_TRUE(config) << config.status().message();
  ASSERT_EQ(config->tile_n, 256);
  ASSERT_EQ(config->cluster_ctas(), 2);
  auto recipe = recipe::make_recipe(program, config.value());
  ASSERT_TRUE(recipe) << recipe.status().message();
  auto kernel = api::compile_fused_kernel(recipe.value(), *context.value());
  ASSERT_TRUE(kernel) << kernel.status().message();

  const auto cubin = dir.path() / "plain.cubin";
  {
    std::ofstream out(cubin, std::ios::binary);
    out.write(reinterpret_cast<const char*>(kernel->image.cubin.data()),
              static_cast<std::streamsize>(kernel->image.cubin.size()));
  }
  const auto sass_path = dir.path() / "plain.sass";
  const std::string command = "\"" + tool + "\" --dump-sass \"" + cubin.string() + "\" > \"" +
                              sass_path.string() + "\" 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << read_text(sass_path);
  const std::string sass = read_text(sass_path);
  EXPECT_NE(sass.find("HGMMA.64x256x16.F32.BF16"), std::string::npos) << "no 64x256 wgmma";
  EXPECT_NE(sass.find("UTMALDG.3D.MULTICAST"), std::string::npos) << "no TMA multicast";
  EXPECT_NE(sass.find("USETMAXREG"), std::string::npos) << "setmaxnreg dropped";
  EXPECT_FALSE(std::regex_search(sass, std::regex(R"(\b(LDL|STL)\b)")))
      << "local memory in the plain kernel";
}

}  // namespace
}  // namespace fusedgemm
