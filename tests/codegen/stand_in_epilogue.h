// A trivial stand-in for the generated epilogue, for the kernel-source tests (the real one
// comes from the epilogue generator): stores GEMM 0's accumulators as fp32 into the first
// dense output's buffer, skipping rows >= M and columns >= N. No output: stores nothing.
#pragma once

#include <string>

#include <fmt/format.h>

#include "codegen/kernel_source.h"
#include "recipe/recipe.h"

namespace fusedgemm_test {

inline fusedgemm::codegen::EpilogueCode stand_in_epilogue(const fusedgemm::recipe::Recipe& recipe) {
  int out = -1;
  for (std::size_t i = 0; i < recipe.roles.size(); ++i) {
    if (recipe.roles[i].kind == fusedgemm::recipe::ParamKind::kOutput && out < 0) {
      out = static_cast<int>(i);
    }
  }
  std::string store;
  if (out >= 0) {
    store = fmt::format(R"(  const fusedgemm::kernels::BufferArg& out = args.buffers[{}];
  float* data = static_cast<float*>(out.data);
#pragma unroll
  for (int i = 0; i < Frag::kCount; ++i) {{
    const long long row = tile.m0 + Frag::row(i, threadIdx.x % 128);
    const long long col = tile.n0 + Frag::col(i, threadIdx.x % 128);
    if (row < args.m && col < args.n) {{
      data[tile.batch * out.stride[0] + row * out.stride[1] + col * out.stride[2]] = acc[0][i];
    }}
  }}
)",
                        out);
  }
  fusedgemm::codegen::EpilogueCode code;
  code.text =
      fmt::format(R"(// stand-in epilogue: GEMM 0's accumulators as fp32 into kernel parameter {}
template <int TileM, int TileN, int G>
__device__ void fusedgemm_epilogue(const fusedgemm::kernels::KernelArgs& args,
                                   const fusedgemm::kernels::TileCoord& tile,
                                   float (&acc)[G][fusedgemm::kernels::Fragment<TileM, TileN>::kCount],
                                   float* smem_scratch, unsigned smem_staging,
                                   unsigned smem_borrowed, unsigned smem_aux,
                                   unsigned& aux_parity) {{
  using Frag = fusedgemm::kernels::Fragment<TileM, TileN>;
  (void)smem_scratch;
  (void)smem_staging;
  (void)smem_borrowed;
  (void)smem_aux;
  (void)aux_parity;
{}}}
template <int TileM, int TileN>
__device__ void fusedgemm_epilogue_prefetch(const fusedgemm::kernels::KernelArgs&,
                                            const fusedgemm::kernels::TileCoord&, unsigned,
                                            unsigned) {{}}
template <int TileM, int TileN>
__device__ void fusedgemm_epilogue_skip(const fusedgemm::kernels::KernelArgs&, unsigned,
                                        unsigned&) {{}}
)",
                  out, store);
  return code;
}

}  // namespace fusedgemm_test
