// Shared-memory addressing. Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// The 32-bit shared-window address of a generic pointer into shared memory, the form every
// shared::cta / shared::cluster operand of the other wrappers takes.
//   PTX: cvta.to.shared.u64 d, a;   PTX ISA 2.0, sm_20.
__device__ __forceinline__ unsigned smem_address(const void* pointer) {
  unsigned address;
  asm volatile(
      "{\n"
      "  .reg .u64 shared64;\n"
      "  cvta.to.shared.u64 shared64, %1;\n"
      "  cvt.u32.u64 %0, shared64;\n"
      "}\n"
      : "=r"(address)
      : "l"(pointer));
  return address;
}

// Stores to a 32-bit shared-window address (the form TMA's shared operands take).
//   PTX: st.shared.b32 / st.shared.b16 / st.shared.v2.b32 [a], v;   PTX ISA 2.0, sm_20.
__device__ __forceinline__ void st_shared_b32(unsigned address, unsigned value) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(value) : "memory");
}
__device__ __forceinline__ void st_shared_b16(unsigned address, unsigned short value) {
  asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(address), "h"(value) : "memory");
}
__device__ __forceinline__ void st_shared_v2_b32(unsigned address, unsigned lo, unsigned hi) {
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};\n" ::"r"(address), "r"(lo), "r"(hi) : "memory");
}

// Loads from a 32-bit shared-window address. Volatile: a load of a buffer TMA fills must stay
// below the barrier wait that says the fill landed.
//   PTX: ld.shared.b32 / ld.shared.v2.b32 v, [a];   PTX ISA 2.0, sm_20.
__device__ __forceinline__ unsigned ld_shared_b32(unsigned address) {
  unsigned value;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(value) : "r"(address) : "memory");
  return value;
}
__device__ __forceinline__ void ld_shared_v2_b32(unsigned address, unsigned& lo, unsigned& hi) {
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(lo), "=r"(hi) : "r"(address) : "memory");
}

}  // namespace fusedgemm::kernels::ptx
