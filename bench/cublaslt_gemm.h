// cuBLASLt's GEMM as the benchmarks call it (bench/device_throughput.cpp, and
// bench/cutlass_reference.cu, which nvcc builds apart from CMake): bf16 or fp8 e4m3 operands,
// bf16 D, fp32 accumulation (fp8: fast, no periodic promotion, as wgmma accumulates), an
// optional GELU_BIAS epilogue, the heuristic's first 8 algorithms. A failing call prints
// itself and exits 2.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace fusedgemm::bench {

inline void lt_check(bool ok, const char* what, const char* file, int line) {
  if (ok) return;
  std::fprintf(stderr, "%s failed (%s:%d)\n", what, file, line);
  std::exit(2);
}
#define FG_LT_CHECK(x) \
  ::fusedgemm::bench::lt_check((x) == CUBLAS_STATUS_SUCCESS, #x, __FILE__, __LINE__)

// D [m, n] row-major = A [m, k] K-major @ B (k x n, K-major): in cuBLASLt's column-major
// terms D^T (n x m) = op_T(B stored k x n) x A^T (k x m).
struct Lt {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  std::vector<cublasLtMatmulAlgo_t> algos;
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 64 << 20;
};

inline Lt make_lt(std::int64_t m, std::int64_t n, std::int64_t k, bool fp8, bool gelu_bias) {
  Lt lt;
  FG_LT_CHECK(cublasLtCreate(&lt.handle));
  FG_LT_CHECK(cublasLtMatmulDescCreate(&lt.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
  FG_LT_CHECK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
  FG_LT_CHECK(
      cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof(nn)));
  if (fp8) {
    const std::int8_t fast = 1;  // no periodic promotion: what wgmma's fp8 accumulation does
    FG_LT_CHECK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                               sizeof(fast)));
  }
  if (gelu_bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    FG_LT_CHECK(cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                               sizeof(epilogue)));
  }
  const cudaDataType_t op = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  FG_LT_CHECK(cublasLtMatrixLayoutCreate(&lt.a, op, k, n, k));
  FG_LT_CHECK(cublasLtMatrixLayoutCreate(&lt.b, op, k, m, k));
  FG_LT_CHECK(cublasLtMatrixLayoutCreate(&lt.d, CUDA_R_16BF, n, m, n));
  lt_check(cudaMalloc(&lt.workspace, lt.workspace_bytes) == cudaSuccess, "cudaMalloc", __FILE__,
           __LINE__);
  cublasLtMatmulPreference_t pref;
  FG_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  FG_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &lt.workspace_bytes,
                                                   sizeof(lt.workspace_bytes)));
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int found = 0;
  FG_LT_CHECK(cublasLtMatmulAlgoGetHeuristic(lt.handle, lt.desc, lt.a, lt.b, lt.d, lt.d, pref, 8,
                                             results, &found));
  lt_check(found > 0, "cublasLtMatmulAlgoGetHeuristic (no algorithm)", __FILE__, __LINE__);
  for (int i = 0; i < found; ++i) lt.algos.push_back(results[i].algo);
  lt.algo = lt.algos[0];
  cublasLtMatmulPreferenceDestroy(pref);
  return lt;
}

// With `c`, D = A @ B + C (beta 1; C laid out as D).
inline void lt_matmul(const Lt& lt, const cublasLtMatmulAlgo_t& algo, const void* a, const void* b,
                      void* d, cudaStream_t stream, const void* bias = nullptr,
                      const float* scale_a = nullptr, const float* scale_b = nullptr,
                      const void* c = nullptr) {
  if (bias != nullptr) {
    cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
  }
  if (scale_a != nullptr) {
    // cuBLASLt's A is our B and its B our A.
    cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b,
                                   sizeof(scale_b));
    cublasLtMatmulDescSetAttribute(lt.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a,
                                   sizeof(scale_a));
  }
  const float one = 1.f, zero = 0.f;
  FG_LT_CHECK(cublasLtMatmul(lt.handle, lt.desc, &one, b, lt.a, a, lt.b, c ? &one : &zero,
                             c ? c : d, lt.d, d, lt.d, &algo, lt.workspace, lt.workspace_bytes,
                             stream));
}

}  // namespace fusedgemm::bench
