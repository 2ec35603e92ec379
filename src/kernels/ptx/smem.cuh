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

}  // namespace fusedgemm::kernels::ptx
