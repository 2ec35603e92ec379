// Reading registers, spills and shared memory out of the ptxas -v lines of NVRTC's log.
// The logs below were captured from NVRTC 13.0 compiling for sm_90a (2025, no GPU needed).
#include "jit/ptxas_report.h"

#include <gtest/gtest.h>

namespace fusedgemm::jit {
namespace {

// A __shared__ float[1024] kernel, a 2 KiB local array indexed at run time (stack, no
// spill), a template instance (mangled name) and a __constant__ reader.
constexpr const char* kSharedAndStackLog =
    R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'const_k' for 'sm_90a'
ptxas info    : Function properties for const_k
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 12.376 ms
ptxas info    : Compiling entry function '_Z5templILi3EEvPf' for 'sm_90a'
ptxas info    : Function properties for _Z5templILi3EEvPf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 1.576 ms
ptxas info    : Compiling entry function 'spill_k' for 'sm_90a'
ptxas info    : Function properties for spill_k
ptxas         .     2048 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 2048 bytes cumulative stack size
ptxas info    : Compile time = 16.307 ms
ptxas info    : Compiling entry function 'shared_k' for 'sm_90a'
ptxas info    : Function properties for shared_k
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 4096 bytes smem
ptxas info    : Compile time = 1.832 ms
ptxas info    : Compiling entry function 'tiny' for 'sm_90a'
ptxas info    : Function properties for tiny
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 5.865 ms
)";

// 64 live floats under __launch_bounds__(1024, 2) (32 registers) spill; a __noinline__
// device function gets a properties block but no "Compiling entry function" line.
constexpr const char* kSpillLog =
    R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'const_k' for 'sm_90a'
ptxas info    : Function properties for const_k
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 18 registers, used 1 barriers, 80 bytes smem
ptxas info    : Compile time = 3.574 ms
ptxas info    : Compiling entry function 'spill_k' for 'sm_90a'
ptxas info    : Function properties for spill_k
ptxas         .     800 bytes stack frame, 564 bytes spill stores, 720 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 800 bytes cumulative stack size
ptxas info    : Compile time = 43.866 ms
ptxas info    : Function properties for _Z6helperPKfi
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

TEST(PtxasReport, ReadsEveryEntryOfARealLog) {
  const PtxasReport report = parse_ptxas_report(kSharedAndStackLog);
  ASSERT_EQ(report.functions.size(), 5u);
  EXPECT_EQ(report.global_bytes, 0u);
  EXPECT_FALSE(report.spills());

  const FunctionResources* shared = report.find("shared_k");
  ASSERT_NE(shared, nullptr);
  EXPECT_TRUE(shared->is_entry);
  EXPECT_EQ(shared->registers, 14);
  EXPECT_EQ(shared->barriers, 1);
  EXPECT_EQ(shared->shared_static_bytes, 4096u);
  EXPECT_EQ(shared->stack_frame_bytes, 0u);

  const FunctionResources* stack = report.find("spill_k");
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(stack->registers, 32);
  EXPECT_EQ(stack->stack_frame_bytes, 2048u);
  EXPECT_EQ(stack->cumulative_stack_bytes, 2048u);
  EXPECT_FALSE(stack->spills());

  const FunctionResources* templ = report.find("_Z5templILi3EEvPf");
  ASSERT_NE(templ, nullptr);
  EXPECT_EQ(templ->registers, 10);
  EXPECT_EQ(report.find("tiny")->registers, 10);
  EXPECT_EQ(report.find("missing"), nullptr);
}

TEST(PtxasReport, ReadsSpillsAndNonEntryFunctions) {
  const PtxasReport report = parse_ptxas_report(kSpillLog);
  ASSERT_EQ(report.functions.size(), 3u);
  EXPECT_TRUE(report.spills());

  const FunctionResources* spill = report.find("spill_k");
  ASSERT_NE(spill, nullptr);
  EXPECT_TRUE(spill->spills());
  EXPECT_EQ(spill->registers, 32);
  EXPECT_EQ(spill->stack_frame_bytes, 800u);
  EXPECT_EQ(spill->spill_store_bytes, 564u);
  EXPECT_EQ(spill->spill_load_bytes, 720u);

  const FunctionResources* helper = report.find("_Z6helperPKfi");
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->is_entry);
  EXPECT_EQ(helper->registers, 0);

  EXPECT_EQ(report.find("const_k")->shared_static_bytes, 80u);
}

TEST(PtxasReport, ReadsConstantAndLocalMemoryOfOlderPtxas) {
  // The item order of CUDA 11/12 ptxas, which still printed cmem banks and lmem.
  const PtxasReport report = parse_ptxas_report(
      "ptxas info    : 16 bytes gmem, 8 bytes cmem[4]\n"
      "ptxas info    : Compiling entry function '_Z4gemmv' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z4gemmv\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 168 registers, 8 bytes lmem, 232448 bytes smem, "
      "544 bytes cmem[0], 16 bytes cmem[2]\r\n");
  ASSERT_EQ(report.functions.size(), 1u);
  const FunctionResources& gemm = report.functions[0];
  EXPECT_EQ(gemm.registers, 168);
  EXPECT_EQ(gemm.local_bytes, 8u);
  EXPECT_EQ(gemm.shared_static_bytes, 232448u);
  EXPECT_EQ(gemm.constant_bytes, 560u);
  EXPECT_EQ(report.global_bytes, 16u);
}

TEST(PtxasReport, IgnoresLinesThatAreNotPtxasInfo) {
  const PtxasReport report = parse_ptxas_report(
      "tiny.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n"
      "ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes spill "
      "stores\n"
      "ptxas info    : Used 9 registers\n"  // no function selected yet: dropped
      "\n");
  EXPECT_TRUE(report.functions.empty());
  EXPECT_TRUE(report.performance_warnings.empty());
  EXPECT_TRUE(parse_ptxas_report("").functions.empty());
}

// The C75xx warnings (wgmma serialized, setmaxnreg ignored) are kept word for word; other
// warnings are not.
TEST(PtxasReport, KeepsPerformanceWarnings) {
  const PtxasReport report = parse_ptxas_report(
      "ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes spill "
      "stores\n"
      "ptxas warning : (C7510) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to the presence of Extern calls in the function 'k'.\n"
      "ptxas warning : (C7508) Potential Performance Loss: USETMAXREG instruction was ignored "
      "in the function 'k'.\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n");
  ASSERT_EQ(report.performance_warnings.size(), 2u);
  EXPECT_NE(report.performance_warnings[0].find("(C7510)"), std::string::npos);
  EXPECT_NE(report.performance_warnings[1].find("(C7508)"), std::string::npos);
}

}  // namespace
}  // namespace fusedgemm::jit
