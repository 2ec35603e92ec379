// One wrapper per PTX `cvt` form the epilogue uses (STYLE.md rule 13): fp32 to each stored
// type with the rounding the host's numeric.h models, and back to fp32 for aux loads.
// Raw bits in and out (unsigned short / unsigned int), so NVRTC needs neither cuda_fp16.h
// nor cuda_bf16.h. Device code; no host headers.
#pragma once

namespace fusedgemm::kernels::ptx {

// cvt.rn.bf16.f32 d, a;  PTX ISA 7.0, sm_80+. Nearest even; NaN gives canonical 0x7FFF.
__device__ __forceinline__ unsigned short cvt_rn_bf16_f32(float a) {
  unsigned short d;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(d) : "f"(a));
  return d;
}

// cvt.rn.f16.f32 d, a;  PTX ISA 1.0 (f16 register form 4.2), all targets. Nearest even;
// overflow gives inf.
__device__ __forceinline__ unsigned short cvt_rn_f16_f32(float a) {
  unsigned short d;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(d) : "f"(a));
  return d;
}

// cvt.f32.f16 d, a;  PTX ISA 1.0, all targets. Exact.
__device__ __forceinline__ float cvt_f32_f16(unsigned short a) {
  float d;
  asm("cvt.f32.f16 %0, %1;" : "=f"(d) : "h"(a));
  return d;
}

// cvt.rn.satfinite.e4m3x2.f32 d, a, b;  PTX ISA 7.8, sm_89+. a goes to the upper byte, b to
// the lower; beyond +-448 (and inf) saturates, NaN gives 0x7F.
__device__ __forceinline__ unsigned short cvt_rn_satfinite_e4m3x2_f32(float upper, float lower) {
  unsigned short d;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(upper), "f"(lower));
  return d;
}

// cvt.rn.satfinite.e5m2x2.f32 d, a, b;  PTX ISA 7.8, sm_89+. As above; saturates at +-57344.
__device__ __forceinline__ unsigned short cvt_rn_satfinite_e5m2x2_f32(float upper, float lower) {
  unsigned short d;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(upper), "f"(lower));
  return d;
}

// cvt.rn.f16x2.e4m3x2 d, a;  PTX ISA 7.8, sm_89+. Exact: every e4m3 value is an f16 value.
// The lower byte of a becomes the lower half of d.
__device__ __forceinline__ unsigned cvt_rn_f16x2_e4m3x2(unsigned short a) {
  unsigned d;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(a));
  return d;
}

// cvt.rn.f16x2.e5m2x2 d, a;  PTX ISA 7.8, sm_89+. Exact.
__device__ __forceinline__ unsigned cvt_rn_f16x2_e5m2x2(unsigned short a) {
  unsigned d;
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(d) : "h"(a));
  return d;
}

// cvt.rni.sat.s8.f32 d, a;  PTX ISA 1.0, all targets. Nearest even, clamped to [-128, 127],
// NaN gives 0. The s8 result sits sign-extended in a 16-bit register.
__device__ __forceinline__ short cvt_rni_sat_s8_f32(float a) {
  short d;
  asm("cvt.rni.sat.s8.f32 %0, %1;" : "=h"(d) : "f"(a));
  return d;
}

// cvt.rni.sat.s32.f32 d, a;  PTX ISA 1.0, all targets. Nearest even, clamped to the int32
// range, NaN gives 0.
__device__ __forceinline__ int cvt_rni_sat_s32_f32(float a) {
  int d;
  asm("cvt.rni.sat.s32.f32 %0, %1;" : "=r"(d) : "f"(a));
  return d;
}

// cvt.rn.f32.s32 d, a;  PTX ISA 1.0, all targets. Nearest even (int32 beyond 2^24 rounds).
__device__ __forceinline__ float cvt_rn_f32_s32(int a) {
  float d;
  asm("cvt.rn.f32.s32 %0, %1;" : "=f"(d) : "r"(a));
  return d;
}

}  // namespace fusedgemm::kernels::ptx
