// The special-function unit's approximations the epilogue's sigmoid, silu and gelu_tanh are
// built from (kernels/pointwise.cuh), in their .ftz forms: CUDA's __expf and __fdividef
// (non-ftz) wrap each MUFU in a compare and two multiplies that rescale subnormal inputs and
// results, 6 of bias + GELU's 10 multiplies per element. A subnormal there is a value below
// 1.2e-38 next to 1 (sigmoid) or the product with it: flushing it changes no result by more
// than that. Device code; no host headers.
#pragma once

namespace fusedgemm::kernels::ptx {

// ex2.approx.ftz.f32 d, a;  PTX ISA 1.0 (ftz 4.0), all targets. 2^a, max relative error
// 2^-22.
__device__ __forceinline__ float ex2_approx_ftz(float a) {
  float d;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}

// rcp.approx.ftz.f32 d, a;  PTX ISA 1.0 (ftz 4.0), all targets. 1 / a, max relative error
// 2^-23; 1 / inf = 0.
__device__ __forceinline__ float rcp_approx_ftz(float a) {
  float d;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}

// tanh.approx.f32 d, a;  PTX ISA 7.0, sm_75. tanh(a), max relative error 2^-10.987, in one
// MUFU.TANH; +-1 for large |a|.
__device__ __forceinline__ float tanh_approx(float a) {
  float d;
  asm("tanh.approx.f32 %0, %1;" : "=f"(d) : "f"(a));
  return d;
}

}  // namespace fusedgemm::kernels::ptx
