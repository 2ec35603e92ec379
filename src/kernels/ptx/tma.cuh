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

// Copies the box at `src` in shared memory to the tensor at coordinates (c0, c1, c2);
// out-of-bounds elements of the box are not written. The copy reads `src` asynchronously:
// the writes that filled it must be fenced to the async proxy first (fence.proxy.async),
// and `src` is not rewritten before bulk_wait_group_read says the copy has read it.
//   PTX: cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [tensorMap, {c0, c1, c2}],
//            [srcMem];   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void tma_store_3d(const void* tensor_map, unsigned src, int c0, int c1,
                                             int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
          tensor_map),
      "r"(src), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Closes this thread's bulk copies issued since the last commit into one bulk group.
//   PTX: cp.async.bulk.commit_group;   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most `Pending` of this thread's bulk groups have not yet read their
// shared-memory sources (the sources may then be rewritten).
//   PTX: cp.async.bulk.wait_group.read N;   PTX ISA 8.0, sm_90.
template <int Pending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}

// Waits until at most `Pending` of this thread's bulk groups are incomplete (their writes
// done), e.g. before the CTA's shared memory goes away.
//   PTX: cp.async.bulk.wait_group N;   PTX ISA 8.0, sm_90.
template <int Pending>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace fusedgemm::kernels::ptx
