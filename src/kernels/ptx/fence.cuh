// Proxy fences. Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Orders this thread's generic-proxy shared-memory accesses against later async-proxy ones
// (TMA, wgmma) and vice versa (PTX ISA "Memory Consistency Model", proxies).
//   PTX: fence.proxy.async.shared::cta;   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace fusedgemm::kernels::ptx
