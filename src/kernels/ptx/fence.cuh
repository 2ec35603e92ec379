// Memory fences: proxy fences, and the GPU-scope fence of an arrival on a counter in global
// memory. Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Orders this thread's generic-proxy shared-memory accesses against later async-proxy ones
// (TMA, wgmma) and vice versa (PTX ISA "Memory Consistency Model", proxies).
//   PTX: fence.proxy.async.shared::cta;   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// A release (before a relaxed atomic) or acquire (after it) fence at GPU scope. Cumulative:
// it also releases what other threads of the CTA stored before a bar.sync this thread then
// met, so one thread fences for a warpgroup (as cooperative groups' grid sync does); lighter
// than __threadfence's fence.sc.gpu (MEMBAR.SC.GPU), which no arrival here needs.
//   PTX: fence.acq_rel.gpu;   PTX ISA 6.0, sm_70.
__device__ __forceinline__ void fence_acq_rel_gpu() {
  asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
}

}  // namespace fusedgemm::kernels::ptx
