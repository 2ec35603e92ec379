// Loads of global memory that other CTAs of the grid wrote (tap and split-K partials, arrival
// counters):
// relaxed at GPU scope, so they are strong operations of the PTX memory model and are served
// by L2, never by a stale L1 line. Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

//   PTX: ld.relaxed.gpu.global.f32 d, [a];   PTX ISA 6.0, sm_70.
__device__ __forceinline__ float ld_relaxed_gpu(const float* address) {
  float value;
  asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(value) : "l"(address) : "memory");
  return value;
}

//   PTX: ld.relaxed.gpu.global.u64 d, [a];   PTX ISA 6.0, sm_70.
__device__ __forceinline__ unsigned long long ld_relaxed_gpu(const unsigned long long* address) {
  unsigned long long value;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

//   PTX: ld.relaxed.gpu.global.v4.f32 {a, b, c, d}, [a];   PTX ISA 6.0, sm_70.
__device__ __forceinline__ float4 ld_relaxed_gpu(const float4* address) {
  float4 v;
  asm volatile("ld.relaxed.gpu.global.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(address)
               : "memory");
  return v;
}

}  // namespace fusedgemm::kernels::ptx
