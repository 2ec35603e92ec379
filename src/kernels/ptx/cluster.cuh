// Thread-block clusters: a CTA's place in its cluster, the cluster-wide barrier, and the
// shared-memory window of another CTA of the cluster. Device code; no host headers (NVRTC).
#pragma once

namespace fusedgemm::kernels::ptx {

// This CTA's rank in its cluster (0 .. cluster size - 1).
//   PTX: mov.u32 d, %cluster_ctarank;   PTX ISA 7.8, sm_90.
__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// The cluster's index in the grid along x, and the number of clusters along x.
//   PTX: mov.u32 d, %clusterid.x; mov.u32 d, %nclusterid.x;   PTX ISA 7.8, sm_90.
__device__ __forceinline__ unsigned cluster_id_x() {
  unsigned id;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(id));
  return id;
}
__device__ __forceinline__ unsigned cluster_count_x() {
  unsigned count;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(count));
  return count;
}

// Every thread of every CTA of the cluster: arrive (releasing this thread's earlier memory
// accesses, barrier initialisation included), then wait until all have arrived (acquiring
// theirs). A cluster of one CTA behaves as __syncthreads.
//   PTX: barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;
//   PTX ISA 8.0, sm_90.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}

// The shared::cluster address of `smem_addr` (a shared::cta address of this CTA) in the CTA
// of rank `rank`: the same offset in that CTA's shared memory.
//   PTX: mapa.shared::cluster.u32 d, a, rank;   PTX ISA 7.8, sm_90.
__device__ __forceinline__ unsigned map_to_rank(unsigned smem_addr, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_addr), "r"(rank));
  return remote;
}

}  // namespace fusedgemm::kernels::ptx
