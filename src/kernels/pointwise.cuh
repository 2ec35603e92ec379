// The pointwise ops of the epilogue DAG whose formula is more than one operation, written
// as the host device (runtime/host_math.cpp) evaluates them, operation for operation.
// Adds and multiplies are explicit _rn intrinsics, so the compiler may not fuse them into an
// fma. sigmoid, silu and gelu_tanh take e^-x and the reciprocal from the SFU (ptx/sfu.cuh:
// within a few fp32 ulp of the host's libm over the range, saturating to the right limits):
// with CUDA's expf, tanhf and an IEEE division they were most of the bias + GELU epilogue's
// instructions. erff and tanhf are CUDA's (a few ulp from libm).
// Device code; no host headers (NVRTC).
#pragma once

#include "kernels/ptx/sfu.cuh"

namespace fusedgemm::kernels {

// e^-x as 2^(-x log2 e); 0 below x = -87.3 and inf above 88.7, as expf.
__device__ __forceinline__ float exp_neg(float x) {
  constexpr float kLog2E = 1.4426950408889634f;
  return ptx::ex2_approx_ftz(__fmul_rn(-kLog2E, x));
}

// relu: x > lower ? min(x, upper) : lower + slope * (x - lower); min as std::min.
__device__ __forceinline__ float relu(float x, float lower, float upper, float slope) {
  return x > lower ? (upper < x ? upper : x)
                   : __fadd_rn(lower, __fmul_rn(slope, __fsub_rn(x, lower)));
}

// 1 / (1 + e^-x): 0 where e^-x overflows, 1 above x = 17.
__device__ __forceinline__ float sigmoid(float x) {
  return ptx::rcp_approx_ftz(__fadd_rn(1.0f, exp_neg(x)));
}

// silu / swish: x * sigmoid(beta * x).
__device__ __forceinline__ float silu(float x, float beta) {
  return __fmul_rn(x, sigmoid(__fmul_rn(beta, x)));
}

// 0.5 * x * (1 + erf(x * 0.70710678118654752)).
__device__ __forceinline__ float gelu_erf(float x) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, erff(__fmul_rn(x, kInvSqrt2))));
}

// 0.5 * x * (1 + tanh(u)), u = 0.79788456080286536 * (x + 0.044715 * x^3), evaluated as
// x / (1 + e^(-2u)) (the same function: 1 + tanh(u) = 2 / (1 + e^(-2u))): one exp and one
// reciprocal, and no cancellation in 1 + tanh(u) for negative x.
__device__ __forceinline__ float gelu_tanh(float x) {
  constexpr float kTwoSqrt2OverPi = 1.5957691216057307f;
  constexpr float kCubic = 0.044715f;
  const float cube = __fmul_rn(__fmul_rn(__fmul_rn(kCubic, x), x), x);
  const float two_u = __fmul_rn(kTwoSqrt2OverPi, __fadd_rn(x, cube));
  return __fmul_rn(x, ptx::rcp_approx_ftz(__fadd_rn(1.0f, exp_neg(two_u))));
}

// 1 / sqrt(x), both correctly rounded (not the rsqrt approximation).
__device__ __forceinline__ float rsqrt_rn(float x) {
  return __fdiv_rn(1.0f, __fsqrt_rn(x));
}

}  // namespace fusedgemm::kernels
