// TMA (the bulk tensor copy engine): tiled loads from global to shared memory through a
// CUtensorMap that lives in the kernel's __grid_constant__ parameter. Device code; no host
// headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// Copies the box at coordinates (c0, c1, c2) (elements, fastest axis first, as the tensor
// map orders its dimensions) to shared memory at `dst` and completes `bytes` of the box on
// barrier `bar`. Out-of-bounds elements are filled (zeros with OOB fill NONE) and still count
// toward the transaction bytes. `tensor_map` is the generic address of the descriptor in the
// __grid_constant__ kernel parameter. `dst` 128-byte aligned (1024 for the 128B swizzle
// pattern to line up with wgmma's descriptors).
//   PTX: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
//            [dstMem], [tensorMap, {c0, c1, c2}], [mbar];   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void tma_load_3d(unsigned dst, const void* tensor_map, unsigned bar,
                                            int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// As tma_load_3d, but the box lands at `dst` in every CTA of the cluster whose rank bit is
// set in `cta_mask`, and completes its bytes on the barrier at `bar` in each of them (the
// same shared-memory offsets in every CTA).
//   PTX: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
//            .multicast::cluster [dstMem], [tensorMap, {c0, c1, c2}], [mbar], ctaMask;
//   PTX ISA 8.0, sm_90a.
__device__ __forceinline__ void tma_load_3d_multicast(unsigned dst, const void* tensor_map,
                                                      unsigned bar, int c0, int c1, int c2,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
      "l"(tensor_map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
      : "memory");
}

// Brings a tensor map into the descriptor cache ahead of the first copy that names it.
//   PTX: prefetch.tensormap [a];   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void tma_prefetch_descriptor(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(tensor_map) : "memory");
}

}  // namespace fusedgemm::kernels::ptx
