// mbarrier: the shared-memory barriers TMA completes on. Addresses are 32-bit shared-window
// addresses (ptx::smem_address). Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Sets the barrier's expected arrival count and clears its phase (phase parity 0 pending).
//   PTX: mbarrier.init.shared::cta.b64 [addr], count;   PTX ISA 7.8 (::cta), sm_80.
__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Makes barrier initialisation visible to the async proxy (TMA's complete_tx) before any
// copy names the barrier.
//   PTX: fence.mbarrier_init.release.cluster;   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival.
//   PTX: mbarrier.arrive.shared::cta.b64 _, [addr];   PTX ISA 7.8 (sink _), sm_80.
__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// One arrival that also raises the phase's pending transaction count by `bytes`; the phase
// completes once every arrival is in and that many bytes have landed (complete_tx).
//   PTX: mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], tx_count;   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

// One arrival on the barrier at `remote_bar`, a shared::cluster address (ptx::map_to_rank)
// of this or another CTA of the cluster: how a consumer hands a stage back to every CTA that
// fills it. Default (CTA-scope) semantics on purpose: the arrival only says the stage's
// wgmma reads are done (wgmma.wait_group precedes it), which orders no generic-proxy
// memory; .release.cluster costs a MEMBAR.ALL.GPU per arrival (SASS, ptxas 13.0), which
// measured 440 against 591 TFLOP/s at 8192^3 (H200, 2026-12-02).
//   PTX: mbarrier.arrive.shared::cluster.b64 _, [addr];   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned remote_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar) : "memory");
}

// True once the phase with parity `parity` has completed; may time out and return false
// (a hardware-bounded wait), so callers loop.
//   PTX: mbarrier.try_wait.parity.shared::cta.b64 p, [addr], parity;   PTX ISA 7.8, sm_90.
__device__ __forceinline__ bool mbarrier_try_wait_parity(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n"
      "  .reg .pred complete;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, complete;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until the phase with parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait_parity(unsigned bar, unsigned parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

}  // namespace fusedgemm::kernels::ptx
