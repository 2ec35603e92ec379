// Special registers the DEBUG checks read. Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Bytes of dynamic shared memory the launch gave this CTA.
//   PTX: mov.u32 d, %dynamic_smem_size;   PTX ISA 4.1, sm_20.
__device__ __forceinline__ unsigned dynamic_smem_bytes() {
  unsigned bytes;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(bytes));
  return bytes;
}

// A global nanosecond timer (coarse-grained; fine for timeouts of seconds).
//   PTX: mov.u64 d, %globaltimer;   PTX ISA 3.1, sm_30.
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(ns));
  return ns;
}

}  // namespace fusedgemm::kernels::ptx
