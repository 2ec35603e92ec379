// The pointwise ops of the epilogue DAG whose formula is more than one operation, written
// as the host device (runtime/host_device.cpp) evaluates them, operation for operation.
// Every add, multiply and divide is an explicit _rn intrinsic: the compiler may not fuse
// them into an fma or swap in an approximation, so the kernel rounds where the host
// rounds. erff, tanhf and expf are CUDA's (a few ulp from the host's libm).
// Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels {

// relu: x > lower ? min(x, upper) : lower + slope * (x - lower); min as std::min.
__device__ __forceinline__ float relu(float x, float lower, float upper, float slope) {
  return x > lower ? (upper < x ? upper : x)
                   : __fadd_rn(lower, __fmul_rn(slope, __fsub_rn(x, lower)));
}

__device__ __forceinline__ float sigmoid(float x) {
  return __fdiv_rn(1.0f, __fadd_rn(1.0f, expf(-x)));
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

// 0.5 * x * (1 + tanh(0.79788456080286536 * (x + 0.044715 * x * x * x))).
__device__ __forceinline__ float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  constexpr float kCubic = 0.044715f;
  const float cube = __fmul_rn(__fmul_rn(__fmul_rn(kCubic, x), x), x);
  return __fmul_rn(__fmul_rn(0.5f, x),
                   __fadd_rn(1.0f, tanhf(__fmul_rn(kSqrt2OverPi, __fadd_rn(x, cube)))));
}

// 1 / sqrt(x), both correctly rounded (not the rsqrt approximation).
__device__ __forceinline__ float rsqrt_rn(float x) {
  return __fdiv_rn(1.0f, __fsqrt_rn(x));
}

}  // namespace fusedgemm::kernels
