// Named barrier over a subset of the CTA's threads (STYLE.md rule 13). The epilogue runs on
// the consumer warpgroup only, so it cannot use __syncthreads (the producer warps would
// never arrive). Device code; no host headers.
#pragma once

namespace fusedgemm::kernels::ptx {

// bar.sync a, b;  PTX ISA 2.0, all targets. Waits until `threads` threads (a multiple of
// 32) have arrived at barrier `id` (0..15); orders the memory accesses of the arriving
// threads as __syncthreads does, for the threads taking part.
__device__ __forceinline__ void bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");
}

}  // namespace fusedgemm::kernels::ptx
