// NVRTC compiles generated code into an sm_90a cubin without a GPU; a refused kernel comes
// back as kCompile with the log and the path of its dumped source (STYLE.md rule 5).
#include "jit/nvrtc_compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "jit/jit_test_util.h"

namespace fusedgemm::jit {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::tiny_kernel;

TEST(NvrtcCompiler, CompilesTinyKernelToSm90aCubin) {
  const Result<CompiledKernel> kernel = compile(tiny_kernel(), CompileOptions{});
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().message();
  ASSERT_GE(kernel->cubin.size(), 4u);
  EXPECT_EQ(std::memcmp(kernel->cubin.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  EXPECT_NE(kernel->log.find("'tiny' for 'sm_90a'"), std::string::npos) << kernel->log;
  const FunctionResources* tiny = kernel->resources.find("tiny");
  ASSERT_NE(tiny, nullptr) << kernel->log;
  EXPECT_TRUE(tiny->is_entry);
  EXPECT_GT(tiny->registers, 0);
  EXPECT_FALSE(kernel->resources.spills());
  EXPECT_GT(kernel->compile_seconds, 0.0);
}

TEST(NvrtcCompiler, SyntaxErrorIsCompileErrorWithLogAndDumpedSource) {
  const TempDir dumps;
  KernelSource source = tiny_kernel();
  source.name = "broken.cu";
  source.code += "extern \"C\" __global__ void broken(float* out) { out[0] = ; }\n";
  CompileOptions options;
  options.dump_dir = dumps.path();

  const Result<CompiledKernel> kernel = compile(source, options);
  ASSERT_FALSE(kernel.is_ok());
  const std::string message = kernel.status().message();
  EXPECT_EQ(kernel.status().code(), ErrorCode::kCompile);
  EXPECT_NE(message.find("nvrtcCompileProgram: NVRTC_ERROR_COMPILATION"), std::string::npos)
      << message;
  EXPECT_NE(message.find("broken.cu(6): error: expected an expression"), std::string::npos)
      << message;

  // The message names the dumped source; it holds the code as compiled.
  const std::string marker = "source dumped to ";
  const std::size_t at = message.find(marker);
  ASSERT_NE(at, std::string::npos) << message;
  const std::size_t end = message.find(';', at);
  const std::filesystem::path dumped = message.substr(at + marker.size(), end - at - marker.size());
  EXPECT_EQ(dumped.parent_path(), dumps.path());
  ASSERT_TRUE(std::filesystem::exists(dumped)) << dumped;
  EXPECT_EQ(read_file(dumped), source.code);
  // The header and the log lie beside it, so the compile can be repeated by hand.
  std::filesystem::path log = dumped;
  log.replace_extension(".log");
  EXPECT_NE(read_file(log).find("expected an expression"), std::string::npos);
  std::filesystem::path headers = dumped;
  headers.replace_extension(".include");
  EXPECT_EQ(read_file(headers / "tiny_helpers.h"), source.headers[0].second);
}

TEST(NvrtcCompiler, VirtualArchIsRefusedBeforeNvrtc) {
  CompileOptions options;
  options.arch = "compute_90a";
  const Result<CompiledKernel> kernel = compile(tiny_kernel(), options);
  ASSERT_FALSE(kernel.is_ok());
  EXPECT_EQ(kernel.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(kernel.status().message().find("compute_90a"), std::string::npos);
}

TEST(NvrtcCompiler, FlagsCarryArchFixedOptionsAndExtrasButNoPaths) {
  CompileOptions options;
  options.extra = {"-DFOO=1"};
  options.include_dirs = std::vector<std::string>{"/opt/cuda/include"};
  const std::vector<std::string> flags = compile_flags(options);
  const std::vector<std::string> expected = {"-arch=sm_90a",    "-std=c++17", "--ptxas-options=-v",
                                             "-default-device", "-lineinfo",  "-DFOO=1"};
  EXPECT_EQ(flags, expected);
  const std::vector<std::string> all = nvrtc_options(options);
  EXPECT_EQ(all.back(), "-I/opt/cuda/include");
  EXPECT_EQ(all.size(), flags.size() + 1);
}

TEST(NvrtcCompiler, VersionIsThirteenOrNewer) {
  const Result<NvrtcVersion> version = nvrtc_version();
  ASSERT_TRUE(version.is_ok()) << version.status().message();
  // sm_90a needs NVRTC 12.0+; this toolkit is 13.0.
  EXPECT_GE(version->major, 12);
}

}  // namespace
}  // namespace fusedgemm::jit
