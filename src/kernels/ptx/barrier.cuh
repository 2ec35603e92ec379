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

// bar.red.or.pred p, a, b, c;  PTX ISA 2.0, all targets. bar_sync that also returns whether
// any of the `threads` arriving threads passed `value` true (one thread's verdict reaches
// the warpgroup without shared memory).
__device__ __forceinline__ bool bar_sync_or(int id, int threads, bool value) {
  unsigned any;
  asm volatile(
      "{\n"
      "  .reg .pred p, q;\n"
      "  setp.ne.u32 p, %1, 0;\n"
      "  bar.red.or.pred q, %2, %3, p;\n"
      "  selp.u32 %0, 1, 0, q;\n"
      "}\n"
      : "=r"(any)
      : "r"(static_cast<unsigned>(value)), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}

}  // namespace fusedgemm::kernels::ptx
