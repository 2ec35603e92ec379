// cuBLASLt is opened at run time: where it (or a GPU) is missing, opening it is an error
// value naming the library, never a crash or an exit.
#include "fallback/cublaslt.h"

#include <gtest/gtest.h>

namespace fusedgemm::fallback {
namespace {

TEST(CublasLt, OpensOrSaysWhyNot) {
  auto lt = CublasLt::open();
  if (lt) {
    auto gemm = lt.value()->plan_gemm(2, 16, 24, 8, true, false);
    EXPECT_TRUE(gemm) << gemm.status().message();
    return;
  }
  EXPECT_TRUE(lt.status().code() == ErrorCode::kUnavailable ||
              lt.status().code() == ErrorCode::kDriver)
      << lt.status().message();
  EXPECT_EQ(lt.status().message().rfind("fallback_cublaslt: ", 0), 0u) << lt.status().message();
}

}  // namespace
}  // namespace fusedgemm::fallback
