// The pointwise ops of the epilogue DAG whose formula is more than one operation, written
// as the host device (runtime/host_math.cpp) evaluates them, operation for operation.
// Adds and multiplies are explicit _rn intrinsics, so the compiler may not fuse them into an
// fma (an fma is written as one, and the host's std::fma matches it). sigmoid takes e^-x and
// the reciprocal from the SFU (ptx/sfu.cuh: within a few fp32 ulp of the host's libm over the
// range, saturating to the right limits): with CUDA's expf and an IEEE division they were
// most of an epilogue's instructions. silu and gelu_tanh take one tanh from the SFU instead
// of an exp and a reciprocal: the SFU serves 16 lanes a clock per SM, and at two ops per
// value a 128x256 unit's GELU spent ~4,000 clocks on it while the tensor cores waited
// (docs/PERF.md, run 30). Its relative error of 2^-11 in the tanh is the one place the
// kernel and the host's libm differ by more than a few ulp: at most 2^-12 |x| in the value,
// where a bf16 output's own rounding is up to 2^-9 of it (docs/SEMANTICS.md). erff and tanhf
// are CUDA's (a few ulp from libm). Device code; no host headers (NVRTC).
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

// silu / swish: x * sigmoid(beta * x) = h + h * tanh(beta * h), h = x / 2.
__device__ __forceinline__ float silu(float x, float beta) {
  const float half = __fmul_rn(0.5f, x);
  return __fmaf_rn(half, ptx::tanh_approx(__fmul_rn(beta, half)), half);
}

// 0.5 * x * (1 + erf(x * 0.70710678118654752)).
__device__ __forceinline__ float gelu_erf(float x) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, erff(__fmul_rn(x, kInvSqrt2))));
}

// 0.5 * x * (1 + tanh(u)), u = sqrt(2 / pi) * (x + 0.044715 * x^3), evaluated as
// h + h * tanh(x * (a + b * x^2)), h = x / 2, a = sqrt(2 / pi), b = 0.044715 a.
__device__ __forceinline__ float gelu_tanh(float x) {
  constexpr float kLinear = 0.79788456080286536f;
  constexpr float kCubic = 0.035677408136300125f;
  const float u = __fmul_rn(x, __fmaf_rn(kCubic, __fmul_rn(x, x), kLinear));
  const float half = __fmul_rn(0.5f, x);
  return __fmaf_rn(half, ptx::tanh_approx(u), half);
}

// 1 / sqrt(x), both correctly rounded (not the rsqrt approximation).
__device__ __forceinline__ float rsqrt_rn(float x) {
  return __fdiv_rn(1.0f, __fsqrt_rn(x));
}

}  // namespace fusedgemm::kernels
